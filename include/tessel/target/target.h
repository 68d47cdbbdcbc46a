// Target: what a module is compiled for, parsed from a string such as "c", "cuda -arch=sm_90" or
// "metal". The first word is the kind; each later word is an option `-key=value` (or `-key`,
// meaning "true") from the kind's list of known options. `str` keeps the string as given.
#ifndef TESSEL_TARGET_TARGET_H_
#define TESSEL_TARGET_TARGET_H_

#include <tvm/ffi/container/array.h>
#include <tvm/ffi/container/map.h>
#include <tvm/ffi/object.h>
#include <tvm/ffi/string.h>

#include <utility>
#include <vector>

namespace tessel {
namespace target {

using tvm::ffi::Map;
using tvm::ffi::String;

class TargetNode : public tvm::ffi::Object {
 public:
  // "c", "cuda" or "metal".
  String kind;
  // Options without their leading '-', e.g. {"arch": "sm_90"}.
  Map<String, String> attrs;
  // The string the target was parsed from.
  String str;

  // attrs[key], or `fallback` when the option was not given.
  String GetAttr(const String& key, const String& fallback = "") const;

  TVM_FFI_DECLARE_OBJECT_INFO_FINAL("tessel.target.Target", TargetNode, tvm::ffi::Object);
};

class Target : public tvm::ffi::ObjectRef {
 public:
  // ValueError naming the offending word (and listing the kinds, or the kind's options) for an
  // unknown kind, an unknown option, a malformed option or a bad option value.
  static Target Parse(const String& text);
  explicit Target(tvm::ffi::ObjectPtr<TargetNode> n) { data_ = std::move(n); }
  TVM_FFI_DEFINE_OBJECT_REF_METHODS_NOTNULLABLE(Target, tvm::ffi::ObjectRef, TargetNode);
};

// The target kinds, in a fixed order.
std::vector<String> TargetKinds();

}  // namespace target
}  // namespace tessel

#endif  // TESSEL_TARGET_TARGET_H_
