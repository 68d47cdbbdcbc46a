#include "emulator.h"

#include <signal.h>
#include <tvm/ffi/error.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>

#include "compiler.h"
#include "fault_guard.h"
#include "threadgroup_memory.h"

namespace tessel {
namespace metal_emu {

namespace {

constexpr uint32_t kMaxThreadsPerGroup = 1024;  // Apple GPUs (docs/metal.md "Limits")
constexpr uint64_t kMaxThreadgroupBytes = 32768;
constexpr uint32_t kSimdWidth = TESSEL_METAL_EMU_SIMD_WIDTH;

struct Counters {
  std::atomic<int64_t> launches{0}, groups{0}, threads{0}, threadgroup_barriers{0},
      simd_rendezvous{0}, compiles{0}, cache_hits{0}, errors{0};
};
Counters& counters() {
  static Counters c;
  return c;
}

// What a host thread reuses from one launch to the next: fiber stacks and guarded mappings.
struct Runner {
  Scheduler scheduler;
  ThreadgroupMemory memory;
};
Runner& ThisThreadRunner() {
  thread_local Runner runner;
  return runner;
}

// The launch running on this host thread. Everything GridLoop writes lives here, not in its
// frame, because a fault jumps out of that frame.
struct RunState {
  const KernelLibrary::Kernel* kernel = nullptr;
  Runner* runner = nullptr;
  TslEmuThreadArgs base{};
  uint32_t threads = 0;
  std::array<uint32_t, 3> group_id = {0, 0, 0};
  int order_bias = 0;
  std::string error;
  int64_t failed_thread = -1;
};
thread_local RunState* tls_run = nullptr;

// ---- the callbacks compiled kernels call (abi.h) ----

void HostThreadgroupBarrier(uint32_t /*mem_flags*/, const TslEmuSite* site) {
  Scheduler::Current()->ThreadgroupBarrier(*site);
}

const unsigned char* HostSimdGather(const void* value, uint32_t size, const TslEmuSite* site,
                                    uint32_t* active, uint32_t* lane) {
  return Scheduler::Current()->SimdGather(value, size, *site, active, lane);
}

void* HostThreadgroupSlot(uint32_t slot) {
  ThreadgroupMemory& m = tls_run->runner->memory;
  if (slot >= m.size()) Scheduler::Current()->Fail("threadgroup declaration slot out of range");
  return m.slot(slot);
}

void HostFail(const char* message, const TslEmuSite* site) {
  std::ostringstream os;
  os << message << " (line " << site->line << ", in " << site->function << ")";
  Scheduler::Current()->Fail(os.str());
}

const TslEmuHost kHost = {TESSEL_METAL_EMU_ABI_VERSION, &HostThreadgroupBarrier, &HostSimdGather,
                          &HostThreadgroupSlot, &HostFail};

// ---- running the grid ----

void ThreadBody(void* user, uint32_t t) {
  auto* r = static_cast<RunState*>(user);
  TslEmuThreadArgs a = r->base;
  uint32_t gx = a.group_size[0], gy = a.group_size[1];
  a.thread_id[0] = t % gx;
  a.thread_id[1] = (t / gx) % gy;
  a.thread_id[2] = t / (gx * gy);
  for (int d = 0; d < 3; ++d) a.grid_thread[d] = a.group_id[d] * a.group_size[d] + a.thread_id[d];
  a.thread_index = t;
  a.simd_lane = t % kSimdWidth;
  a.simd_group = t / kSimdWidth;
  r->kernel->compiled->entry(&a);
}

void GridLoop(void* user) {
  auto* r = static_cast<RunState*>(user);
  Runner& run = *r->runner;
  const uint32_t* grid = r->base.groups;
  size_t dynamic_slot = r->kernel->compiled->num_threadgroup;
  for (uint32_t z = 0; z < grid[2]; ++z) {
    for (uint32_t y = 0; y < grid[1]; ++y) {
      for (uint32_t x = 0; x < grid[0]; ++x) {
        r->group_id = {x, y, z};
        uint64_t linear = x + uint64_t{grid[0]} * (y + uint64_t{grid[1]} * z);
        // Alternate which end of each array touches a guard page (threadgroup_memory.h).
        run.memory.BeginGroup(((linear + r->order_bias) & 1) == 0);
        r->base.group_id[0] = x;
        r->base.group_id[1] = y;
        r->base.group_id[2] = z;
        r->base.dynamic_threadgroup =
            r->kernel->signature->dynamic_threadgroup ? run.memory.slot(dynamic_slot) : nullptr;
        r->error = run.scheduler.RunGroup(r->threads, &ThreadBody, r);
        if (!r->error.empty()) {
          r->failed_thread = run.scheduler.failed_thread();
          return;
        }
        r->error = run.memory.CheckSlack();
        if (!r->error.empty()) {
          r->error = "threadgroup memory out of bounds: " + r->error;
          return;
        }
      }
    }
  }
}

std::string ThreadName(const TslEmuThreadArgs& a, int64_t t) {
  uint32_t gx = a.group_size[0], gy = a.group_size[1];
  auto u = static_cast<uint32_t>(t);
  std::ostringstream os;
  os << "thread (" << u % gx << "," << (u / gx) % gy << "," << u / (gx * gy) << ") [linear " << u
     << "]";
  return os.str();
}

std::string DescribeFault(const FaultInfo& f, Runner& run, const KernelLibrary& lib) {
  std::ostringstream os;
  const char* access = f.access == 1 ? "write" : f.access == 0 ? "read" : "access";
  if (f.signal == SIGFPE) {
    os << "arithmetic trap (SIGFPE: an integer division by zero, or INT_MIN / -1; a GPU gives an "
          "undefined value instead)";
  } else {
    std::string tg = run.memory.Describe(f.address);
    if (!tg.empty()) {
      os << "threadgroup memory out of bounds: " << access << " " << tg;
    } else if (run.scheduler.InStackGuard(f.address)) {
      os << "stack overflow (an emulated thread has 256 KiB of stack)";
    } else {
      os << "invalid memory " << access << " at " << f.address
         << " (not threadgroup memory: a device buffer out of bounds, an unbound [[buffer]], or "
            "a bad pointer)";
    }
  }
  std::string line = lib.SourceLine(f.pc);
  if (!line.empty()) os << " at " << line;
  return os.str();
}

std::string Dim3(const uint32_t* v) {
  std::ostringstream os;
  os << "(" << v[0] << "," << v[1] << "," << v[2] << ")";
  return os.str();
}

bool HasWord(const std::string& text, const std::string& word) {
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    bool before =
        at == 0 || !(std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_');
    size_t e = at + word.size();
    bool after =
        e >= text.size() || !(std::isalnum(static_cast<unsigned char>(text[e])) || text[e] == '_');
    if (before && after) return true;
  }
  return false;
}

std::string CheckTable(const EmuKernelTable& t, const KernelLibrary::Kernel& k,
                       uint64_t tg_static) {
  const MslKernel& sig = *k.signature;
  std::ostringstream os;
  auto param_at = [&](uint32_t slot) -> const MslParam* {
    for (const MslParam& p : sig.params)
      if ((p.kind == ParamKind::kBuffer || p.kind == ParamKind::kBufferReference) &&
          p.index == slot)
        return &p;
    return nullptr;
  };
  for (uint32_t slot : t.buffer_slots) {
    if (param_at(slot) == nullptr)
      os << "the kernel table binds a buffer at [[buffer(" << slot
         << ")]], which the MSL signature does not have; ";
  }
  for (const MslParam& p : sig.params) {
    if (p.kind != ParamKind::kBuffer && p.kind != ParamKind::kBufferReference) continue;
    bool listed =
        std::find(t.buffer_slots.begin(), t.buffer_slots.end(), p.index) != t.buffer_slots.end() ||
        (t.args_bytes > 0 && p.index == t.args_index);
    if (!listed)
      os << "MSL parameter " << p.name << " [[buffer(" << p.index
         << ")]] has no entry in the kernel table; ";
  }
  if (t.args_bytes > 0) {
    const MslParam* p = param_at(t.args_index);
    size_t pi = p ? static_cast<size_t>(p - sig.params.data()) : 0;
    if (p == nullptr || p->kind != ParamKind::kBufferReference) {
      os << "the kernel table puts the argument struct at [[buffer(" << t.args_index
         << ")]], where the MSL has no reference parameter; ";
    } else if (k.compiled->param_ref_bytes[pi] != t.args_bytes) {
      os << "the argument struct " << p->name << " is " << k.compiled->param_ref_bytes[pi]
         << " bytes in the MSL, the kernel table says " << t.args_bytes << "; ";
    } else {
      // Each scalar must land on a member of the struct; each member must be written by one.
      std::vector<bool> covered(k.compiled->num_fields, false);
      for (const auto& [offset, bytes] : t.scalars) {
        bool found = false;
        for (uint32_t f = 0; f < k.compiled->num_fields; ++f) {
          const TslEmuField& field = k.compiled->fields[f];
          if (field.param == pi && field.offset == offset && field.bytes >= bytes) {
            covered[f] = found = true;
          }
        }
        if (!found && k.compiled->num_fields > 0)
          os << "the kernel table writes a " << bytes << "-byte scalar at byte " << offset << " of "
             << p->name << ", where the MSL struct has no member of that size; ";
      }
      for (uint32_t f = 0; f < k.compiled->num_fields; ++f) {
        const TslEmuField& field = k.compiled->fields[f];
        if (field.param == pi && !covered[f])
          os << "member " << field.name << " (byte " << field.offset << ") of " << p->name
             << " is not written by any scalar of the kernel table; ";
      }
    }
  }
  if (t.threadgroup_dynamic != sig.dynamic_threadgroup)
    os << "the kernel table says " << (t.threadgroup_dynamic ? "" : "no ")
       << "dynamic threadgroup memory, the MSL " << (sig.dynamic_threadgroup ? "has" : "has no")
       << " [[threadgroup(0)]] parameter; ";
  if (tg_static > t.threadgroup_static_bytes)
    os << "the kernel declares " << tg_static
       << " bytes of threadgroup arrays, the kernel table says " << t.threadgroup_static_bytes
       << "; ";
  if (t.max_threads != 0 && sig.max_threads != 0 && t.max_threads != sig.max_threads)
    os << "the kernel table says " << t.max_threads
       << " threads per threadgroup, the MSL [[max_total_threads_per_threadgroup("
       << sig.max_threads << ")]]; ";
  std::string out = os.str();
  if (!out.empty()) out.resize(out.size() - 2);
  return out;
}

// Whether "major.minor" is below major.minor (an unreadable version is not).
bool MslVersionBelow(const std::string& version, int major, int minor) {
  int a = 0, b = 0;
  if (std::sscanf(version.c_str(), "%d.%d", &a, &b) < 1) return false;
  return a < major || (a == major && b < minor);
}

}  // namespace

void RunKernel(const EmuLaunch& launch) {
  Counters& c = counters();
  bool hit = false;
  std::shared_ptr<const KernelLibrary> lib;
  try {
    lib = LoadKernelLibrary(*launch.source, &kHost, &hit);
  } catch (...) {
    ++c.errors;
    throw;
  }
  ++(hit ? c.cache_hits : c.compiles);
  const KernelLibrary::Kernel* k = lib->Find(launch.kernel);
  std::string where = "metal_emu: kernel " + launch.kernel + ": ";
  auto fail = [&](const std::string& message) {
    ++c.errors;
    TVM_FFI_THROW(RuntimeError) << where << message;
  };
  if (k == nullptr) {
    std::string names;
    for (const auto& other : lib->kernels())
      names += (names.empty() ? "" : ", ") + other.signature->name;
    fail("no such kernel in the MSL source (it has: " + names + ")");
  }
  const MslKernel& sig = *k->signature;
  if (!launch.msl_version.empty() && lib->uses_bfloat() &&
      MslVersionBelow(launch.msl_version, 3, 1))
    fail("the source uses bfloat, which needs MSL 3.1; the module asks for MSL " +
         launch.msl_version);

  // ---- the launch against Metal's limits and the kernel's signature ----
  uint64_t threads = 1;
  for (int d = 0; d < 3; ++d) {
    if (launch.grid[d] < 1 || launch.group[d] < 1) fail("a launch dimension is 0");
    threads *= launch.group[d];
  }
  if (threads > kMaxThreadsPerGroup)
    fail(std::to_string(threads) + " threads per threadgroup; Metal allows " +
         std::to_string(kMaxThreadsPerGroup));
  if (sig.max_threads != 0 && threads > sig.max_threads)
    fail(std::to_string(threads) +
         " threads per threadgroup; the kernel declares "
         "[[max_total_threads_per_threadgroup(" +
         std::to_string(sig.max_threads) + ")]]");
  if (launch.dynamic_threadgroup_bytes % 16 != 0)
    fail("dynamic threadgroup memory of " + std::to_string(launch.dynamic_threadgroup_bytes) +
         " bytes; Metal needs a multiple of 16");

  std::array<void*, TESSEL_METAL_EMU_MAX_BUFFERS> slots{};
  for (const auto& [index, ptr] : launch.buffers) {
    if (index >= TESSEL_METAL_EMU_MAX_BUFFERS)
      fail("buffer index " + std::to_string(index) + " >= 31");
    slots[index] = ptr;
  }
  int64_t args_index = launch.args_index;
  if (args_index < 0) {
    for (const MslParam& p : sig.params) {
      if (p.kind == ParamKind::kBufferReference && HasWord(p.type, "constant") &&
          slots[p.index] == nullptr) {
        args_index = p.index;
        break;
      }
    }
  }
  // The argument struct, copied to memory aligned for any of its members.
  std::unique_ptr<std::max_align_t[]> arg_storage;
  if (!launch.arg_bytes.empty()) {
    if (args_index < 0 || args_index >= TESSEL_METAL_EMU_MAX_BUFFERS)
      fail(
          "the launch has argument bytes but the kernel has no constant reference parameter for "
          "them");
    size_t n = (launch.arg_bytes.size() + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
    arg_storage.reset(new std::max_align_t[n]);
    std::memcpy(arg_storage.get(), launch.arg_bytes.data(), launch.arg_bytes.size());
    slots[args_index] = arg_storage.get();
  }
  for (size_t i = 0; i < sig.params.size(); ++i) {
    const MslParam& p = sig.params[i];
    if (p.kind != ParamKind::kBufferReference) continue;
    if (slots[p.index] == nullptr)
      fail("parameter " + p.name + " [[buffer(" + std::to_string(p.index) +
           ")]] is a reference but nothing is bound there");
    uint32_t need = k->compiled->param_ref_bytes[i];
    if (p.index == args_index && launch.arg_bytes.size() < need)
      fail("parameter " + p.name + " reads a " + std::to_string(need) +
           "-byte argument struct; the launch gives " + std::to_string(launch.arg_bytes.size()) +
           " bytes");
  }

  std::vector<ThreadgroupMemory::Decl> decls;
  uint64_t tg_bytes = 0;
  for (uint32_t i = 0; i < k->compiled->num_threadgroup; ++i) {
    const TslEmuThreadgroupDecl& d = k->compiled->threadgroup[i];
    decls.push_back({d.name, d.bytes, d.align});
    tg_bytes += d.bytes;
  }
  if (launch.table) {
    std::string mismatch = CheckTable(*launch.table, *k, tg_bytes);
    if (!mismatch.empty()) fail("the kernel table and the MSL disagree: " + mismatch);
  }
  if (sig.dynamic_threadgroup) {
    decls.push_back({"the [[threadgroup(0)]] block", launch.dynamic_threadgroup_bytes, 16});
    tg_bytes += launch.dynamic_threadgroup_bytes;
  }
  if (tg_bytes > kMaxThreadgroupBytes)
    fail(std::to_string(tg_bytes) + " bytes of threadgroup memory; Metal allows " +
         std::to_string(kMaxThreadgroupBytes));

  // ---- the grid ----
  Runner& run = ThisThreadRunner();
  run.memory.Prepare(decls);
  run.scheduler.SetOrder(launch.order, launch.seed);
  RunState r;
  r.kernel = k;
  r.runner = &run;
  r.threads = static_cast<uint32_t>(threads);
  r.order_bias = launch.order == Order::kReverse  ? 1
                 : launch.order == Order::kRandom ? (launch.seed & 1)
                                                  : 0;
  r.base.buffers = slots.data();
  for (int d = 0; d < 3; ++d) {
    r.base.groups[d] = launch.grid[d];
    r.base.group_size[d] = launch.group[d];
    r.base.grid_size[d] = launch.grid[d] * launch.group[d];
  }
  r.base.simd_groups = static_cast<uint32_t>((threads + kSimdWidth - 1) / kSimdWidth);
  r.base.simd_width = kSimdWidth;
  SchedulerCounters before = run.scheduler.counters();

  RunState* outer = tls_run;
  tls_run = &r;
  FaultInfo fault;
  bool ok = RunGuarded(&GridLoop, &r, &fault);
  tls_run = outer;
  if (!ok) {
    r.failed_thread = run.scheduler.running_thread();
    run.scheduler.AbandonGroup();
    r.error = DescribeFault(fault, run, *lib);
  }

  const SchedulerCounters& after = run.scheduler.counters();
  ++c.launches;
  c.groups += static_cast<int64_t>(after.groups - before.groups);
  c.threads += static_cast<int64_t>((after.groups - before.groups) * threads);
  c.threadgroup_barriers +=
      static_cast<int64_t>(after.threadgroup_barriers - before.threadgroup_barriers);
  c.simd_rendezvous += static_cast<int64_t>(after.simd_rendezvous - before.simd_rendezvous);
  if (!r.error.empty()) {
    std::string at = "threadgroup " + Dim3(r.group_id.data());
    if (r.failed_thread >= 0) at += ", " + ThreadName(r.base, r.failed_thread);
    fail(at + " (" + OrderName(launch.order) + " order): " + r.error);
  }
}

EmuStats GetStats() {
  Counters& c = counters();
  EmuStats s;
  s.launches = c.launches;
  s.groups = c.groups;
  s.threads = c.threads;
  s.threadgroup_barriers = c.threadgroup_barriers;
  s.simd_rendezvous = c.simd_rendezvous;
  s.compiles = c.compiles;
  s.cache_hits = c.cache_hits;
  s.errors = c.errors;
  return s;
}

}  // namespace metal_emu
}  // namespace tessel
