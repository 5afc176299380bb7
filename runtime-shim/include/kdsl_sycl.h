// The C++ side of kdsl-runtime's SYCL backend. Rust calls these functions through the cxx bridge
// in crates/kdsl-runtime/src/backend/sycl.rs; every function that can fail throws, and cxx turns
// the exception into a Rust error carrying its message.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>

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

// Each opaque type hides its SYCL objects behind a pointer to an implementation defined in
// kdsl_sycl.cpp, so only that file needs the SYCL headers.
#define KDSL_SYCL_OPAQUE(Name)                              \
  class Name {                                              \
   public:                                                  \
    struct Impl;                                            \
    explicit Name(std::unique_ptr<Impl> impl);              \
    ~Name();                                                \
    Name(const Name &) = delete;                            \
    Name &operator=(const Name &) = delete;                 \
    Impl &impl() const { return *impl_; }                   \
                                                            \
   private:                                                 \
    std::unique_ptr<Impl> impl_;                            \
  };

KDSL_SYCL_OPAQUE(Queue)
KDSL_SYCL_OPAQUE(Program)
KDSL_SYCL_OPAQUE(Kernel)
KDSL_SYCL_OPAQUE(Event)

#undef KDSL_SYCL_OPAQUE

rust::Vec<DeviceDescription> list_devices();
std::unique_ptr<Queue> create_queue(std::size_t index);
std::unique_ptr<Program> build_program(const Queue &queue, rust::Slice<const std::uint8_t> spirv);
std::unique_ptr<Kernel> program_kernel(const Program &program, rust::Str name);
std::uint64_t allocate(const Queue &queue, std::size_t bytes, std::uint8_t kind);
void release(const Queue &queue, std::uint64_t address);
void copy_to_device(const Queue &queue, std::uint64_t address, rust::Slice<const std::uint8_t> data);
void copy_from_device(const Queue &queue, std::uint64_t address, rust::Slice<std::uint8_t> data);
void fill(const Queue &queue, std::uint64_t address, rust::Slice<const std::uint8_t> pattern,
          std::size_t count);
void wait(const Queue &queue);
std::unique_ptr<Event> launch(const Queue &queue, const Kernel &kernel,
                              rust::Slice<const std::uint64_t> global,
                              rust::Slice<const std::uint64_t> local,
                              rust::Slice<const KernelArgument> arguments);
void event_wait(const Event &event);
std::uint64_t event_elapsed_ns(const Event &event);

}  // namespace kdsl_sycl
