// The one registry of environment switches. Every environment variable that tessel reads is listed
// in src/support/env.cc with its default and one line of documentation, so `tessel.env_vars()`
// (and GetEnv's refusal of unlisted names) keeps the list complete: debugging never needs a
// recompile, and never needs reading the source to find a switch.
#ifndef TESSEL_SUPPORT_ENV_H_
#define TESSEL_SUPPORT_ENV_H_

#include <string>
#include <vector>

namespace tessel {
namespace support {

struct EnvVarInfo {
  const char* name;
  // The value used when the variable is unset (or set to the empty string).
  const char* default_value;
  const char* doc;
};

// Every registered switch, in a fixed order.
const std::vector<EnvVarInfo>& EnvVars();

// The value of the registered switch `name`: the environment's when set and non-empty, else its
// default. Throws InternalError for a name that is not registered (a switch must be listed).
std::string GetEnv(const std::string& name);

// A registered switch read as a flag: "1", "true", "yes", "on" are true; "0", "false", "no", "off"
// are false (case-insensitive). Anything else throws ValueError naming the variable and the value.
bool GetEnvFlag(const std::string& name);

// A table of every switch: name, default, current value when set, and its documentation.
std::string FormatEnvVars();

}  // namespace support
}  // namespace tessel

#endif  // TESSEL_SUPPORT_ENV_H_
