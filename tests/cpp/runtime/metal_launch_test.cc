// The platform-independent Metal launch path, apart from Metal itself: the tessel_metal bytes
// format, launch plans made from packed arguments (buffer indices, offsets, the argument struct's
// bytes, threadgroup sizes, every refusal), the framework-context lookup order and what a launch
// does with the context and the executor.
#include <gtest/gtest.h>
#include <tessel/runtime/metal_module.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>

#include <cstring>
#include <thread>
#include <vector>

#include "../ir/expect_error.h"

namespace tessel {
namespace runtime {
namespace {

using testing::ExpectError;
using tvm::ffi::AnyView;

MetalParamInfo Buffer(uint32_t slot, DLDataType t = {kDLFloat, 32, 1}) {
  MetalParamInfo p;
  p.kind = MetalParamKind::kBuffer;
  p.dtype = t;
  p.slot = slot;
  return p;
}

MetalParamInfo Scalar(uint32_t offset, DLDataType t) {
  MetalParamInfo p;
  p.kind = MetalParamKind::kScalar;
  p.dtype = t;
  p.slot = offset;
  return p;
}

// kernel k(device float* a [[buffer(0)]], device half* b [[buffer(1)]],
//          constant {int n; half h; bool flag; long big;}& [[buffer(2)]]) with dynamic memory.
std::shared_ptr<const MetalModuleData> Module() {
  auto data = std::make_shared<MetalModuleData>();
  data->source = "kernel void k() {}";
  MetalKernelInfo k;
  k.name = "k";
  k.params = {Buffer(0),
              Buffer(1, {kDLFloat, 16, 1}),
              Scalar(0, {kDLInt, 32, 1}),
              Scalar(4, {kDLFloat, 16, 1}),
              Scalar(6, {kDLBool, 8, 1}),
              Scalar(8, {kDLInt, 64, 1})};
  k.args_index = 2;
  k.args_bytes = 16;
  k.threadgroup_static_bytes = 1024;
  k.threadgroup_dynamic = true;
  k.max_threads = 256;
  data->kernels.push_back(k);
  return data;
}

// A DLTensor* argument, as tvm-ffi passes a raw DLTensor.
AnyView TensorArg(DLTensor* t) {
  TVMFFIAny a{};
  a.type_index = kTVMFFIDLTensorPtr;
  a.v_ptr = t;
  return *reinterpret_cast<AnyView*>(&a);
}

struct Args {
  std::vector<AnyView> v;
  Args(std::initializer_list<int64_t> header) {
    for (int64_t h : header) v.push_back(AnyView(h));
  }
};

TEST(MetalModule, BytesRoundTripAndRefusals) {
  MetalModuleData data = *Module();
  data.msl_version = "3.2";
  data.fast_math = true;
  tvm::ffi::Bytes bytes = SaveMetalModuleBytes(data);
  MetalModuleData back = ParseMetalModuleBytes(bytes.data(), bytes.size());
  EXPECT_EQ(back.source, data.source);
  EXPECT_EQ(back.msl_version, "3.2");
  EXPECT_TRUE(back.fast_math);
  ASSERT_EQ(back.kernels.size(), 1u);
  EXPECT_EQ(back.kernels[0], data.kernels[0]);

  std::string s(bytes.data(), bytes.size());
  ExpectError([&] { ParseMetalModuleBytes("TSLCUDA\0\1\0\0\0", 12); }, "ValueError", {"bad magic"});
  std::string v2 = s;
  v2[8] = 2;
  ExpectError([&] { ParseMetalModuleBytes(v2.data(), v2.size()); }, "ValueError",
              {"format version 2 is not supported", "rebuild the library"});
  ExpectError([&] { ParseMetalModuleBytes(s.data(), s.size() - 3); }, "ValueError",
              {"truncated at"});
  std::string extra = s + "x";
  ExpectError([&] { ParseMetalModuleBytes(extra.data(), extra.size()); }, "ValueError",
              {"1 trailing bytes"});

  MetalModuleData bad = data;
  bad.kernels[0].params[1].slot = 0;  // two buffers at slot 0
  ExpectError([&] { SaveMetalModuleBytes(bad); }, "ValueError", {"buffer slot 0"});
  bad = data;
  bad.kernels[0].params[5].slot = 12;  // an int64 at 12 ends past the 16-byte struct... misaligned
  ExpectError([&] { SaveMetalModuleBytes(bad); }, "ValueError", {"misaligned or outside"});
  bad = data;
  bad.kernels[0].params[0].dtype = {kDLFloat, 64, 1};
  ExpectError([&] { SaveMetalModuleBytes(bad); }, "ValueError", {"unsupported type"});
  bad = data;
  bad.msl_version = "1.2";
  ExpectError([&] { SaveMetalModuleBytes(bad); }, "ValueError", {"unknown MSL version '1.2'"});
}

TEST(MetalLaunchPlan, BindsBuffersScalarsAndSizes) {
  auto module = Module();
  TesselMetalBufferRef a{reinterpret_cast<void*>(0x1000), 64};
  // A metal tensor: its data is the buffer handle, its byte_offset the binding offset.
  int64_t shape[1] = {8};
  DLTensor b{};
  b.data = reinterpret_cast<void*>(0x2000);
  b.device = {kDLMetal, 0};
  b.ndim = 1;
  b.dtype = {kDLFloat, 16, 1};
  b.shape = shape;
  b.byte_offset = 6;
  Args args({0, 4, 2, 1, 128, 2, 1, 100});
  args.v.push_back(AnyView(static_cast<void*>(&a)));
  args.v.push_back(TensorArg(&b));
  args.v.push_back(AnyView(int64_t{-7}));
  args.v.push_back(AnyView(1.5));
  args.v.push_back(AnyView(true));
  args.v.push_back(AnyView(int64_t{1} << 40));
  MetalLaunchPlan plan = MakeMetalLaunchPlan(module, 0, args.v.data(), args.v.size());
  EXPECT_EQ(plan.grid, (std::array<uint32_t, 3>{4, 2, 1}));
  EXPECT_EQ(plan.group, (std::array<uint32_t, 3>{128, 2, 1}));
  EXPECT_EQ(plan.threads(), 256);
  EXPECT_EQ(plan.threadgroup_dynamic_bytes, 112u);  // 100 rounded up to 16
  ASSERT_EQ(plan.buffers.size(), 2u);
  EXPECT_EQ(plan.buffers[0].index, 0u);
  EXPECT_EQ(plan.buffers[0].buffer, a.buffer);
  EXPECT_EQ(plan.buffers[0].offset, 64u);
  EXPECT_EQ(plan.buffers[1].index, 1u);
  EXPECT_EQ(plan.buffers[1].buffer, b.data);
  EXPECT_EQ(plan.buffers[1].offset, 6u);
  ASSERT_EQ(plan.arg_bytes.size(), 16u);
  int32_t n;
  std::memcpy(&n, &plan.arg_bytes[0], 4);
  EXPECT_EQ(n, -7);
  uint16_t h;
  std::memcpy(&h, &plan.arg_bytes[4], 2);
  EXPECT_EQ(h, 0x3E00);  // 1.5 in float16
  EXPECT_EQ(plan.arg_bytes[6], 1);
  EXPECT_EQ(plan.arg_bytes[7], 0);  // padding stays zero
  int64_t big;
  std::memcpy(&big, &plan.arg_bytes[8], 8);
  EXPECT_EQ(big, int64_t{1} << 40);

  // None binds nothing.
  args.v[8] = AnyView(nullptr);
  plan = MakeMetalLaunchPlan(module, 0, args.v.data(), args.v.size());
  EXPECT_EQ(plan.buffers[0].buffer, nullptr);
}

TEST(MetalLaunchPlan, Refusals) {
  auto module = Module();
  TesselMetalBufferRef a{reinterpret_cast<void*>(0x1000), 0};
  auto make = [&](std::initializer_list<int64_t> header) {
    Args args(header);
    args.v.push_back(AnyView(static_cast<void*>(&a)));
    args.v.push_back(AnyView(nullptr));
    args.v.push_back(AnyView(int64_t{1}));
    args.v.push_back(AnyView(0.0));
    args.v.push_back(AnyView(false));
    args.v.push_back(AnyView(int64_t{2}));
    return args;
  };
  Args ok = make({0, 1, 1, 1, 32, 1, 1, 0});
  ExpectError([&] { MakeMetalLaunchPlan(module, 0, ok.v.data(), 3); }, "TypeError",
              {"k: expected 14 launch arguments", "got 3"});
  Args many = make({0, 1, 1, 1, 512, 1, 1, 0});
  ExpectError([&] { MakeMetalLaunchPlan(module, 0, many.v.data(), many.v.size()); }, "ValueError",
              {"512 threads per threadgroup", "kernel's limit of 256"});
  Args zero = make({0, 0, 1, 1, 32, 1, 1, 0});
  ExpectError([&] { MakeMetalLaunchPlan(module, 0, zero.v.data(), zero.v.size()); }, "ValueError",
              {"grid x = 0", "at least 1"});
  Args tg = make({0, 1, 1, 1, 32, 1, 1, 32000});
  ExpectError([&] { MakeMetalLaunchPlan(module, 0, tg.v.data(), tg.v.size()); }, "ValueError",
              {"32000 bytes of dynamic threadgroup memory (+ 1024 static)", "32768"});
  Args neg = make({0, 1, 1, 1, 32, 1, 1, -1});
  ExpectError([&] { MakeMetalLaunchPlan(module, 0, neg.v.data(), neg.v.size()); }, "ValueError",
              {"dyn_threadgroup_bytes = -1"});
  Args type = make({0, 1, 1, 1, 32, 1, 1, 0});
  type.v[10] = AnyView(1.5);
  ExpectError([&] { MakeMetalLaunchPlan(module, 0, type.v.data(), type.v.size()); }, "TypeError",
              {"k: kernel argument 2: expected int, got float"});
  Args range = make({0, 1, 1, 1, 32, 1, 1, 0});
  range.v[10] = AnyView(int64_t{1} << 31);
  ExpectError([&] { MakeMetalLaunchPlan(module, 0, range.v.data(), range.v.size()); }, "ValueError",
              {"kernel argument 2: expected an int32 value, got 2147483648"});
  // A tensor of another device, and a misaligned offset.
  int64_t shape[1] = {4};
  DLTensor cpu{};
  cpu.device = {kDLCPU, 0};
  cpu.ndim = 1;
  cpu.dtype = {kDLFloat, 32, 1};
  cpu.shape = shape;
  Args dev = make({0, 1, 1, 1, 32, 1, 1, 0});
  dev.v[8] = TensorArg(&cpu);
  ExpectError([&] { MakeMetalLaunchPlan(module, 0, dev.v.data(), dev.v.size()); }, "ValueError",
              {"kernel argument 0: expected a tensor on metal:0"});
  TesselMetalBufferRef odd{reinterpret_cast<void*>(0x1000), 2};
  Args mis = make({0, 1, 1, 1, 32, 1, 1, 0});
  mis.v[8] = AnyView(static_cast<void*>(&odd));
  ExpectError([&] { MakeMetalLaunchPlan(module, 0, mis.v.data(), mis.v.size()); }, "ValueError",
              {"byte offset 2 is not a multiple of 4", "float32"});
  Args str = make({0, 1, 1, 1, 32, 1, 1, 0});
  str.v[8] = AnyView(int64_t{5});
  ExpectError([&] { MakeMetalLaunchPlan(module, 0, str.v.data(), str.v.size()); }, "TypeError",
              {"expected a metal tensor or a TesselMetalBufferRef*, got int"});
}

// ---- contexts and launches ----

struct MockContext {
  TesselMetalContext c{};
  std::string name;
  int calls = 0;
  int fail = 0;
  void* command_buffer;
  explicit MockContext(const char* n, void* cb) : name(n), command_buffer(cb) {
    c.magic = TESSEL_METAL_CONTEXT_MAGIC;
    c.abi_version = TESSEL_METAL_CONTEXT_ABI_VERSION;
    c.name = name.c_str();
    c.self = this;
    c.with_encoder = [](void* self, int32_t, TesselMetalEncodeBody body, void* user) {
      auto* m = static_cast<MockContext*>(self);
      ++m->calls;
      if (m->fail) return m->fail;
      return body(user, m->command_buffer, nullptr);
    };
    c.last_error = [](void*) -> const char* { return "queue is gone"; };
  }
};

class RecordingExecutor : public MetalExecutor {
 public:
  const char* name() const override { return "recorder"; }
  void Encode(const MetalLaunchPlan& plan, void* command_buffer, void* encoder) override {
    if (throw_) TVM_FFI_THROW(RuntimeError) << "encode failed for " << plan.info().name;
    last_command_buffer = command_buffer;
    ++encoded;
  }
  const TesselMetalContext* DefaultContext(int32_t) override {
    return with_default ? &default_context.c : nullptr;
  }
  MockContext default_context{"recorder.default", reinterpret_cast<void*>(0xD0)};
  void* last_command_buffer = nullptr;
  int encoded = 0;
  bool with_default = true;
  bool throw_ = false;
};

// Installs an executor for one test and restores the previous one.
struct ExecutorScope {
  MetalExecutor* previous;
  explicit ExecutorScope(MetalExecutor* e) : previous(SetMetalExecutor(e)) {}
  ~ExecutorScope() { SetMetalExecutor(previous); }
};

MetalLaunchPlan SimplePlan() {
  MetalLaunchPlan plan;
  auto data = std::make_shared<MetalModuleData>();
  MetalKernelInfo k;
  k.name = "simple";
  data->kernels.push_back(k);
  plan.module = data;
  return plan;
}

TEST(MetalContext, LookupOrderThreadThenStreamSlotThenDefault) {
  RecordingExecutor exec;
  ExecutorScope scope(&exec);
  MetalContextSource source;
  EXPECT_EQ(FindMetalContext(0, &source), &exec.default_context.c);
  EXPECT_EQ(source, MetalContextSource::kDefault);

  MockContext slot("slot", reinterpret_cast<void*>(0x51));
  TVMFFIStreamHandle prev = nullptr;
  ASSERT_EQ(TVMFFIEnvSetStream(kDLMetal, 0, &slot.c, &prev), 0);
  EXPECT_EQ(FindMetalContext(0, &source), &slot.c);
  EXPECT_EQ(source, MetalContextSource::kStreamSlot);
  EXPECT_EQ(FindMetalContext(1, &source), &exec.default_context.c);  // another device's slot

  MockContext thread("thread", reinterpret_cast<void*>(0x71));
  {
    MetalThreadContextScope t(&thread.c);
    EXPECT_EQ(FindMetalContext(0, &source), &thread.c);
    EXPECT_EQ(source, MetalContextSource::kThread);
    // Another thread does not see it.
    std::thread other([&] {
      MetalContextSource s;
      EXPECT_EQ(FindMetalContext(0, &s), &exec.default_context.c);
    });
    other.join();
  }
  EXPECT_EQ(FindMetalContext(0, &source), &slot.c);  // the scope restored the previous (none)

  // A foreign value in the slot (a framework's own stream object) is ignored.
  uint64_t foreign[4] = {0x1234, 0, 0, 0};
  ASSERT_EQ(TVMFFIEnvSetStream(kDLMetal, 0, foreign, nullptr), 0);
  EXPECT_EQ(FindMetalContext(0, &source), &exec.default_context.c);
  // A known magic with an unknown ABI version is an error, not a guess.
  MockContext future("future", nullptr);
  future.c.abi_version = 9;
  ASSERT_EQ(TVMFFIEnvSetStream(kDLMetal, 0, &future.c, nullptr), 0);
  ExpectError([&] { FindMetalContext(0, &source); }, "ValueError",
              {"future", "ABI version 9", "reads version 1"});
  ASSERT_EQ(TVMFFIEnvSetStream(kDLMetal, 0, prev, nullptr), 0);
}

TEST(MetalContext, LaunchEncodesInTheLentCommandBuffer) {
  MetalLaunchPlan plan = SimplePlan();
  {
    ExecutorScope none(nullptr);
    ExpectError([&] { LaunchMetal(plan); }, "RuntimeError",
                {"simple: the Metal runtime is not available on this platform"});
  }
  RecordingExecutor exec;
  ExecutorScope scope(&exec);
  LaunchMetal(plan);
  EXPECT_EQ(exec.encoded, 1);
  EXPECT_EQ(exec.last_command_buffer, reinterpret_cast<void*>(0xD0));
  EXPECT_EQ(exec.default_context.calls, 1);

  MockContext torch("torch.mps", reinterpret_cast<void*>(0x7E));
  {
    MetalThreadContextScope t(&torch.c);
    LaunchMetal(plan);
  }
  EXPECT_EQ(exec.last_command_buffer, reinterpret_cast<void*>(0x7E));
  EXPECT_EQ(torch.calls, 1);

  // The context's own failure, with its message; the executor's error crosses the C callback.
  torch.fail = 3;
  {
    MetalThreadContextScope t(&torch.c);
    ExpectError([&] { LaunchMetal(plan); }, "RuntimeError",
                {"simple: the Metal context torch.mps (thread) failed with code 3: queue is gone"});
  }
  exec.throw_ = true;
  ExpectError([&] { LaunchMetal(plan); }, "RuntimeError", {"encode failed for simple"});
  exec.throw_ = false;
  exec.with_default = false;
  ExpectError([&] { LaunchMetal(plan); }, "RuntimeError",
              {"no Metal context for device 0", "recorder runtime offers no default"});
}

}  // namespace
}  // namespace runtime
}  // namespace tessel
