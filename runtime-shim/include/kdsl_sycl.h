// The C++ side of kdsl-runtime's SYCL backend as the Rust binary sees it. Rust calls these
// functions through the cxx bridge in crates/kdsl-runtime/src/backend/sycl.rs; they are defined in
// kdsl_sycl_loader.cpp, which opens libkdsl_sycl_shim.so (the SYCL code, kdsl_sycl.cpp) with dlopen
// and forwards to it. Every function that can fail throws, and cxx turns the exception into a Rust
// error carrying its message. Nothing here needs the SYCL headers or libsycl.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>

#include "kdsl_sycl_shim.h"
#include "rust/cxx.h"

// cxx calls this around every bridged function declared to return Result. The default catches only
// std::exception; this one also catches anything else, so no C++ exception can cross into Rust.
namespace rust {
namespace behavior {
template <typename Try, typename Fail>
static void trycatch(Try &&func, Fail &&fail) noexcept try {
  func();
} catch (const std::exception &error) {
  fail(error.what());
} catch (...) {
  fail("unknown C++ exception in the SYCL runtime");
}
}  // namespace behavior
}  // namespace rust

namespace kdsl_sycl {

struct DeviceDescription;
struct KernelArgument;

// Each opaque type owns one handle of the shim library and frees it on destruction.
#define KDSL_SYCL_OPAQUE(Name, Handle)                  \
  class Name {                                          \
   public:                                              \
    explicit Name(Handle *handle) : handle_(handle) {}  \
    ~Name();                                            \
    Name(const Name &) = delete;                        \
    Name &operator=(const Name &) = delete;             \
    Handle *handle() const { return handle_; }          \
                                                        \
   private:                                             \
    Handle *handle_;                                    \
  };

KDSL_SYCL_OPAQUE(Queue, kdsl_sycl_queue)
KDSL_SYCL_OPAQUE(Program, kdsl_sycl_program)
KDSL_SYCL_OPAQUE(Kernel, kdsl_sycl_kernel)
KDSL_SYCL_OPAQUE(Event, kdsl_sycl_event)

#undef KDSL_SYCL_OPAQUE

// Opens libkdsl_sycl_shim.so (and through it libsycl) once per process; throws, with the dynamic
// loader's message, when that fails. list_devices and create_queue call it first.
void load_runtime();

rust::Vec<DeviceDescription> list_devices();
std::unique_ptr<Queue> create_queue(std::size_t index);
std::unique_ptr<Queue> create_sibling_queue(const Queue &queue, bool profiled);
// `sycl_queue` is the address of a `sycl::queue`; `device_index` receives its device's index.
std::unique_ptr<Queue> adopt_queue(std::uint64_t sycl_queue, std::size_t &device_index);
void validate_spirv(rust::Slice<const std::uint8_t> spirv);
std::unique_ptr<Program> build_program(const Queue &queue, rust::Slice<const std::uint8_t> spirv);
std::unique_ptr<Program> load_syclbin(const Queue &queue, rust::Slice<const std::uint8_t> syclbin);
// The device's native binary of a program built from SPIR-V (OpenCL devices only).
rust::Vec<std::uint8_t> program_binary(const Program &program);
// A program made from a binary of program_binary for the queue's device.
std::unique_ptr<Program> program_from_binary(const Queue &queue,
                                             rust::Slice<const std::uint8_t> binary);
// Backend, name, vendor, driver version and device version of the queue's device, one a line.
rust::String queue_device_identity(const Queue &queue);
std::unique_ptr<Kernel> program_kernel(const Program &program, rust::Str name);
std::uint64_t allocate(const Queue &queue, std::size_t bytes, std::uint8_t kind);
void release(const Queue &queue, std::uint64_t address);
// `wait_for` holds the addresses of Event objects (of this bridge) to wait for.
std::unique_ptr<Event> copy(const Queue &queue, std::uint64_t destination, std::uint64_t source,
                            std::size_t size, rust::Slice<const std::uint64_t> wait_for);
std::unique_ptr<Event> fill(const Queue &queue, std::uint64_t address,
                            rust::Slice<const std::uint8_t> pattern, std::size_t count,
                            rust::Slice<const std::uint64_t> wait_for);
void wait(const Queue &queue);
std::unique_ptr<Event> launch(const Queue &queue, const Kernel &kernel,
                              rust::Slice<const std::uint64_t> global,
                              rust::Slice<const std::uint64_t> local,
                              rust::Slice<const KernelArgument> arguments,
                              rust::Slice<const std::uint64_t> wait_for);
// Facts of a queue: in order, and profiling enabled.
bool queue_in_order(const Queue &queue);
bool queue_profiled(const Queue &queue);
// A launch on an in-order queue that makes no event; completion is learnt from a later marker.
void launch_without_event(const Queue &queue, const Kernel &kernel,
                          rust::Slice<const std::uint64_t> global,
                          rust::Slice<const std::uint64_t> local,
                          rust::Slice<const KernelArgument> arguments);
// An event complete once everything submitted to the queue so far is.
std::unique_ptr<Event> submit_marker(const Queue &queue);
// A copy of a foreign `sycl::event*` (an address) as an event of the queue, and the address
// of the `sycl::event` inside an event.
std::unique_ptr<Event> event_from_native(const Queue &queue, std::uint64_t sycl_event);
std::uint64_t event_native(const Event &event);
std::uint64_t kernel_native(const Kernel &kernel);
std::uint64_t new_native_queue(std::size_t index);
void delete_native_queue(std::uint64_t queue);
void event_wait(const Event &event);
bool event_is_complete(const Event &event);
std::uint64_t event_elapsed_ns(const Event &event);

}  // namespace kdsl_sycl
