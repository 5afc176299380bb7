// The part of kdsl-runtime's SYCL backend that is linked into Rust binaries: it opens
// libkdsl_sycl_shim.so with dlopen, so that no binary depends on libsycl in the dynamic loader,
// and forwards each bridged function to the shim's C interface (kdsl_sycl_shim.h), turning a
// failure into an exception that cxx hands to Rust as an error.

#include "kdsl_sycl.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "kdsl-runtime/src/backend/sycl.rs.h"

// build.rs defines this as the absolute path of the shim library it built.
#ifndef KDSL_SYCL_SHIM_BUILT_PATH
#error "KDSL_SYCL_SHIM_BUILT_PATH must name the built libkdsl_sycl_shim.so"
#endif

namespace kdsl_sycl {

namespace {

constexpr const char *kShimFileName = "libkdsl_sycl_shim.so";

// The shim's functions, resolved once by dlsym.
struct ShimFunctions {
  decltype(&kdsl_sycl_interface_version) interface_version;
  decltype(&kdsl_sycl_last_error) last_error;
  decltype(&kdsl_sycl_list_devices) list_devices;
  decltype(&kdsl_sycl_create_queue) create_queue;
  decltype(&kdsl_sycl_create_sibling_queue) create_sibling_queue;
  decltype(&kdsl_sycl_adopt_queue) adopt_queue;
  decltype(&kdsl_sycl_destroy_queue) destroy_queue;
  decltype(&kdsl_sycl_validate_spirv) validate_spirv;
  decltype(&kdsl_sycl_build_program) build_program;
  decltype(&kdsl_sycl_load_syclbin) load_syclbin;
  decltype(&kdsl_sycl_program_binary) program_binary;
  decltype(&kdsl_sycl_program_from_binary) program_from_binary;
  decltype(&kdsl_sycl_queue_device_identity) queue_device_identity;
  decltype(&kdsl_sycl_destroy_program) destroy_program;
  decltype(&kdsl_sycl_program_kernel) program_kernel;
  decltype(&kdsl_sycl_destroy_kernel) destroy_kernel;
  decltype(&kdsl_sycl_allocate) allocate;
  decltype(&kdsl_sycl_release) release;
  decltype(&kdsl_sycl_copy) copy;
  decltype(&kdsl_sycl_fill) fill;
  decltype(&kdsl_sycl_wait) wait;
  decltype(&kdsl_sycl_launch) launch;
  decltype(&kdsl_sycl_queue_facts) queue_facts;
  decltype(&kdsl_sycl_launch_without_event) launch_without_event;
  decltype(&kdsl_sycl_submit_marker) submit_marker;
  decltype(&kdsl_sycl_event_from_native) event_from_native;
  decltype(&kdsl_sycl_event_native) event_native;
  decltype(&kdsl_sycl_kernel_native) kernel_native;
  decltype(&kdsl_sycl_new_native_queue) new_native_queue;
  decltype(&kdsl_sycl_delete_native_queue) delete_native_queue;
  decltype(&kdsl_sycl_destroy_event) destroy_event;
  decltype(&kdsl_sycl_event_wait) event_wait;
  decltype(&kdsl_sycl_event_is_complete) event_is_complete;
  decltype(&kdsl_sycl_event_elapsed_ns) event_elapsed_ns;
};

// The outcome of the one attempt to load the shim: the functions, or why they are missing.
struct LoadResult {
  ShimFunctions functions{};
  bool loaded = false;
  std::string error;
};

std::string dynamic_loader_error() {
  const char *message = dlerror();
  return message != nullptr ? message : "unknown dynamic loader error";
}

// The directory of the running executable, with a trailing slash, or empty if unknown.
std::string executable_directory() {
  std::vector<char> buffer(4096);
  ssize_t length = readlink("/proc/self/exe", buffer.data(), buffer.size());
  if (length <= 0 || static_cast<std::size_t>(length) >= buffer.size()) return std::string();
  std::string path(buffer.data(), static_cast<std::size_t>(length));
  std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// KDSL_SYCL_SHIM if set; otherwise the library build.rs built, then one next to the executable.
std::vector<std::string> candidate_paths() {
  const char *configured = std::getenv("KDSL_SYCL_SHIM");
  if (configured != nullptr && configured[0] != '\0') return {configured};
  std::vector<std::string> paths{KDSL_SYCL_SHIM_BUILT_PATH};
  std::string directory = executable_directory();
  if (!directory.empty() && directory + kShimFileName != paths.front()) {
    paths.push_back(directory + kShimFileName);
  }
  return paths;
}

template <typename Function>
bool resolve(void *library, const char *name, Function &function, std::string &error) {
  dlerror();
  void *symbol = dlsym(library, name);
  if (symbol == nullptr) {
    error = dynamic_loader_error();
    return false;
  }
  function = reinterpret_cast<Function>(symbol);
  return true;
}

// Resolves every function of the shim at `path`; on failure returns false with `error` set.
bool load_from(const std::string &path, ShimFunctions &functions, std::string &error) {
  void *library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    error = dynamic_loader_error();
    return false;
  }
  ShimFunctions table{};
  bool resolved =
      resolve(library, "kdsl_sycl_interface_version", table.interface_version, error) &&
      resolve(library, "kdsl_sycl_last_error", table.last_error, error) &&
      resolve(library, "kdsl_sycl_list_devices", table.list_devices, error) &&
      resolve(library, "kdsl_sycl_create_queue", table.create_queue, error) &&
      resolve(library, "kdsl_sycl_create_sibling_queue", table.create_sibling_queue, error) &&
      resolve(library, "kdsl_sycl_adopt_queue", table.adopt_queue, error) &&
      resolve(library, "kdsl_sycl_destroy_queue", table.destroy_queue, error) &&
      resolve(library, "kdsl_sycl_validate_spirv", table.validate_spirv, error) &&
      resolve(library, "kdsl_sycl_build_program", table.build_program, error) &&
      resolve(library, "kdsl_sycl_load_syclbin", table.load_syclbin, error) &&
      resolve(library, "kdsl_sycl_program_binary", table.program_binary, error) &&
      resolve(library, "kdsl_sycl_program_from_binary", table.program_from_binary, error) &&
      resolve(library, "kdsl_sycl_queue_device_identity", table.queue_device_identity, error) &&
      resolve(library, "kdsl_sycl_destroy_program", table.destroy_program, error) &&
      resolve(library, "kdsl_sycl_program_kernel", table.program_kernel, error) &&
      resolve(library, "kdsl_sycl_destroy_kernel", table.destroy_kernel, error) &&
      resolve(library, "kdsl_sycl_allocate", table.allocate, error) &&
      resolve(library, "kdsl_sycl_release", table.release, error) &&
      resolve(library, "kdsl_sycl_copy", table.copy, error) &&
      resolve(library, "kdsl_sycl_fill", table.fill, error) &&
      resolve(library, "kdsl_sycl_wait", table.wait, error) &&
      resolve(library, "kdsl_sycl_launch", table.launch, error) &&
      resolve(library, "kdsl_sycl_queue_facts", table.queue_facts, error) &&
      resolve(library, "kdsl_sycl_launch_without_event", table.launch_without_event, error) &&
      resolve(library, "kdsl_sycl_submit_marker", table.submit_marker, error) &&
      resolve(library, "kdsl_sycl_event_from_native", table.event_from_native, error) &&
      resolve(library, "kdsl_sycl_event_native", table.event_native, error) &&
      resolve(library, "kdsl_sycl_kernel_native", table.kernel_native, error) &&
      resolve(library, "kdsl_sycl_new_native_queue", table.new_native_queue, error) &&
      resolve(library, "kdsl_sycl_delete_native_queue", table.delete_native_queue, error) &&
      resolve(library, "kdsl_sycl_destroy_event", table.destroy_event, error) &&
      resolve(library, "kdsl_sycl_event_wait", table.event_wait, error) &&
      resolve(library, "kdsl_sycl_event_is_complete", table.event_is_complete, error) &&
      resolve(library, "kdsl_sycl_event_elapsed_ns", table.event_elapsed_ns, error);
  if (resolved && table.interface_version() != KDSL_SYCL_SHIM_INTERFACE_VERSION) {
    error = path + " has interface version " + std::to_string(table.interface_version()) +
            ", this binary needs " + std::to_string(KDSL_SYCL_SHIM_INTERFACE_VERSION) +
            " (rebuild it with this kdsl-runtime)";
    resolved = false;
  }
  if (!resolved) {
    dlclose(library);
    return false;
  }
  // The library stays loaded for the life of the process.
  functions = table;
  return true;
}

const LoadResult &load_result() {
  static const LoadResult result = [] {
    LoadResult outcome;
    for (const std::string &path : candidate_paths()) {
      std::string error;
      if (load_from(path, outcome.functions, error)) {
        outcome.loaded = true;
        outcome.error.clear();
        return outcome;
      }
      if (!outcome.error.empty()) outcome.error += "; ";
      outcome.error += error;
    }
    return outcome;
  }();
  return result;
}

// The shim's functions; throws when it could not be loaded.
const ShimFunctions &shim() {
  const LoadResult &result = load_result();
  if (!result.loaded) throw std::runtime_error(result.error);
  return result.functions;
}

// Throws the shim's message for a failed call.
void check(int status) {
  if (status != 0) throw std::runtime_error(shim().last_error());
}

// Collects the devices the shim reports into the bridge's vector.
struct DeviceCollector {
  rust::Vec<DeviceDescription> devices;
  std::string error;

  static int visit(void *context, const kdsl_sycl_device_description *description,
                   const char **message) {
    auto *collector = static_cast<DeviceCollector *>(context);
    try {
      DeviceDescription converted;
      converted.index = description->index;
      converted.name = rust::String(description->name);
      converted.vendor = rust::String(description->vendor);
      converted.driver_version = rust::String(description->driver_version);
      converted.device_version = rust::String(description->device_version);
      converted.backend = rust::String(description->backend);
      converted.device_type = rust::String(description->device_type);
      converted.global_memory_bytes = description->global_memory_bytes;
      converted.local_memory_bytes = description->local_memory_bytes;
      converted.compute_units = description->compute_units;
      converted.max_work_group_size = description->max_work_group_size;
      converted.supports_spirv = description->supports_spirv != 0;
      for (std::size_t index = 0; index < description->sub_group_size_count; ++index) {
        converted.sub_group_sizes.push_back(description->sub_group_sizes[index]);
      }
      collector->devices.push_back(std::move(converted));
      return 0;
    } catch (const std::exception &error) {
      collector->error = error.what();
    } catch (...) {
      collector->error = "unknown C++ exception while listing SYCL devices";
    }
    *message = collector->error.c_str();
    return 1;
  }
};

}  // namespace

// A handle exists only after the shim loaded, so these need no check (and must not throw).
Queue::~Queue() { load_result().functions.destroy_queue(handle_); }
Program::~Program() { load_result().functions.destroy_program(handle_); }
Kernel::~Kernel() { load_result().functions.destroy_kernel(handle_); }
Event::~Event() { load_result().functions.destroy_event(handle_); }

void load_runtime() { shim(); }

rust::Vec<DeviceDescription> list_devices() {
  DeviceCollector collector;
  check(shim().list_devices(&DeviceCollector::visit, &collector));
  return std::move(collector.devices);
}

std::unique_ptr<Queue> create_queue(std::size_t index) {
  kdsl_sycl_queue *handle = nullptr;
  check(shim().create_queue(index, &handle));
  return std::make_unique<Queue>(handle);
}

std::unique_ptr<Queue> create_sibling_queue(const Queue &queue, bool profiled) {
  kdsl_sycl_queue *handle = nullptr;
  check(shim().create_sibling_queue(queue.handle(), profiled ? 1 : 0, &handle));
  return std::make_unique<Queue>(handle);
}

std::unique_ptr<Queue> adopt_queue(std::uint64_t sycl_queue, std::size_t &device_index) {
  kdsl_sycl_queue *handle = nullptr;
  check(shim().adopt_queue(reinterpret_cast<const void *>(sycl_queue), &handle, &device_index));
  return std::make_unique<Queue>(handle);
}

void validate_spirv(rust::Slice<const std::uint8_t> spirv) {
  check(shim().validate_spirv(spirv.data(), spirv.size()));
}

std::unique_ptr<Program> build_program(const Queue &queue, rust::Slice<const std::uint8_t> spirv) {
  kdsl_sycl_program *handle = nullptr;
  check(shim().build_program(queue.handle(), spirv.data(), spirv.size(), &handle));
  return std::make_unique<Program>(handle);
}

std::unique_ptr<Program> load_syclbin(const Queue &queue, rust::Slice<const std::uint8_t> syclbin) {
  kdsl_sycl_program *handle = nullptr;
  check(shim().load_syclbin(queue.handle(), syclbin.data(), syclbin.size(), &handle));
  return std::make_unique<Program>(handle);
}

namespace {
// A kdsl_sycl_bytes_sink appending to the rust::Vec<std::uint8_t> at `context`.
void append_bytes(void *context, const std::uint8_t *bytes, std::size_t size) {
  auto &vector = *static_cast<rust::Vec<std::uint8_t> *>(context);
  vector.reserve(vector.size() + size);
  for (std::size_t index = 0; index < size; ++index) vector.push_back(bytes[index]);
}
}  // namespace

rust::Vec<std::uint8_t> program_binary(const Program &program) {
  rust::Vec<std::uint8_t> binary;
  check(shim().program_binary(program.handle(), append_bytes, &binary));
  return binary;
}

std::unique_ptr<Program> program_from_binary(const Queue &queue,
                                             rust::Slice<const std::uint8_t> binary) {
  kdsl_sycl_program *handle = nullptr;
  check(shim().program_from_binary(queue.handle(), binary.data(), binary.size(), &handle));
  return std::make_unique<Program>(handle);
}

rust::String queue_device_identity(const Queue &queue) {
  rust::Vec<std::uint8_t> bytes;
  check(shim().queue_device_identity(queue.handle(), append_bytes, &bytes));
  return rust::String::lossy(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

std::unique_ptr<Kernel> program_kernel(const Program &program, rust::Str name) {
  kdsl_sycl_kernel *handle = nullptr;
  check(shim().program_kernel(program.handle(), name.data(), name.size(), &handle));
  return std::make_unique<Kernel>(handle);
}

std::uint64_t allocate(const Queue &queue, std::size_t bytes, std::uint8_t kind) {
  std::uint64_t address = 0;
  check(shim().allocate(queue.handle(), bytes, kind, &address));
  return address;
}

void release(const Queue &queue, std::uint64_t address) {
  check(shim().release(queue.handle(), address));
}

namespace {

// The shim handles of the bridge's Event objects at the given addresses.
std::vector<const kdsl_sycl_event *> event_handles(rust::Slice<const std::uint64_t> events) {
  std::vector<const kdsl_sycl_event *> handles;
  handles.reserve(events.size());
  for (std::uint64_t address : events) {
    handles.push_back(reinterpret_cast<const Event *>(address)->handle());
  }
  return handles;
}

}  // namespace

std::unique_ptr<Event> copy(const Queue &queue, std::uint64_t destination, std::uint64_t source,
                            std::size_t size, rust::Slice<const std::uint64_t> wait_for) {
  std::vector<const kdsl_sycl_event *> waits = event_handles(wait_for);
  kdsl_sycl_event *handle = nullptr;
  check(shim().copy(queue.handle(), destination, source, size, waits.data(), waits.size(),
                    &handle));
  return std::make_unique<Event>(handle);
}

std::unique_ptr<Event> fill(const Queue &queue, std::uint64_t address,
                            rust::Slice<const std::uint8_t> pattern, std::size_t count,
                            rust::Slice<const std::uint64_t> wait_for) {
  std::vector<const kdsl_sycl_event *> waits = event_handles(wait_for);
  kdsl_sycl_event *handle = nullptr;
  check(shim().fill(queue.handle(), address, pattern.data(), pattern.size(), count, waits.data(),
                    waits.size(), &handle));
  return std::make_unique<Event>(handle);
}

void wait(const Queue &queue) { check(shim().wait(queue.handle())); }

std::unique_ptr<Event> launch(const Queue &queue, const Kernel &kernel,
                              rust::Slice<const std::uint64_t> global,
                              rust::Slice<const std::uint64_t> local,
                              rust::Slice<const KernelArgument> arguments,
                              rust::Slice<const std::uint64_t> wait_for) {
  if (global.size() != local.size() || global.empty() || global.size() > 3) {
    throw std::runtime_error("a launch needs 1 to 3 dimensions, with as many local sizes");
  }
  std::vector<kdsl_sycl_kernel_argument> converted;
  converted.reserve(arguments.size());
  for (const KernelArgument &argument : arguments) {
    converted.push_back(kdsl_sycl_kernel_argument{argument.kind, argument.bits});
  }
  std::vector<const kdsl_sycl_event *> waits = event_handles(wait_for);
  kdsl_sycl_event *handle = nullptr;
  check(shim().launch(queue.handle(), kernel.handle(), global.data(), local.data(), global.size(),
                      converted.data(), converted.size(), waits.data(), waits.size(), &handle));
  return std::make_unique<Event>(handle);
}

bool queue_in_order(const Queue &queue) {
  int in_order = 0, profiled = 0;
  check(shim().queue_facts(queue.handle(), &in_order, &profiled));
  return in_order != 0;
}

bool queue_profiled(const Queue &queue) {
  int in_order = 0, profiled = 0;
  check(shim().queue_facts(queue.handle(), &in_order, &profiled));
  return profiled != 0;
}

void launch_without_event(const Queue &queue, const Kernel &kernel,
                          rust::Slice<const std::uint64_t> global,
                          rust::Slice<const std::uint64_t> local,
                          rust::Slice<const KernelArgument> arguments) {
  if (global.size() != local.size() || global.empty() || global.size() > 3) {
    throw std::runtime_error("a launch needs 1 to 3 dimensions, with as many local sizes");
  }
  static_assert(sizeof(KernelArgument) == sizeof(kdsl_sycl_kernel_argument) &&
                    offsetof(KernelArgument, kind) == offsetof(kdsl_sycl_kernel_argument, kind) &&
                    offsetof(KernelArgument, bits) == offsetof(kdsl_sycl_kernel_argument, bits),
                "the bridge's and the shim's argument layouts agree");
  const auto *converted = reinterpret_cast<const kdsl_sycl_kernel_argument *>(arguments.data());
  check(shim().launch_without_event(queue.handle(), kernel.handle(), global.data(), local.data(),
                                    global.size(), converted, arguments.size()));
}

std::unique_ptr<Event> submit_marker(const Queue &queue) {
  kdsl_sycl_event *handle = nullptr;
  check(shim().submit_marker(queue.handle(), &handle));
  return std::make_unique<Event>(handle);
}

std::unique_ptr<Event> event_from_native(const Queue &queue, std::uint64_t sycl_event) {
  kdsl_sycl_event *handle = nullptr;
  check(shim().event_from_native(queue.handle(), reinterpret_cast<const void *>(sycl_event),
                                 &handle));
  return std::make_unique<Event>(handle);
}

std::uint64_t event_native(const Event &event) {
  const void *native = nullptr;
  check(shim().event_native(event.handle(), &native));
  return reinterpret_cast<std::uint64_t>(native);
}

std::uint64_t kernel_native(const Kernel &kernel) {
  const void *native = nullptr;
  check(shim().kernel_native(kernel.handle(), &native));
  return reinterpret_cast<std::uint64_t>(native);
}

std::uint64_t new_native_queue(std::size_t index) {
  void *queue = nullptr;
  check(shim().new_native_queue(index, &queue));
  return reinterpret_cast<std::uint64_t>(queue);
}

void delete_native_queue(std::uint64_t queue) {
  shim().delete_native_queue(reinterpret_cast<void *>(queue));
}

void event_wait(const Event &event) { check(shim().event_wait(event.handle())); }

bool event_is_complete(const Event &event) {
  int complete = 0;
  check(shim().event_is_complete(event.handle(), &complete));
  return complete != 0;
}

std::uint64_t event_elapsed_ns(const Event &event) {
  std::uint64_t nanoseconds = 0;
  check(shim().event_elapsed_ns(event.handle(), &nanoseconds));
  return nanoseconds;
}

}  // namespace kdsl_sycl
