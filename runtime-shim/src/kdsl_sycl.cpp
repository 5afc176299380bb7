// The SYCL backend of kdsl-runtime: device discovery, queues, SPIR-V kernel bundles, USM memory
// and nd_range launches, on the Intel SYCL runtime (libsycl), compiled as plain host C++17.

#include "kdsl_sycl.h"

#include <sycl/sycl.hpp>

#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "kdsl-runtime/src/backend/sycl.rs.h"

namespace kdsl_sycl {

namespace syclex = sycl::ext::oneapi::experimental;

namespace {

// The argument kinds, as crates/kdsl-runtime/src/backend/sycl.rs encodes them.
enum ArgumentKind : std::uint8_t {
  kPointer = 0,
  kBool = 1,
  kI8 = 2,
  kU8 = 3,
  kI16 = 4,
  kU16 = 5,
  kI32 = 6,
  kU32 = 7,
  kI64 = 8,
  kU64 = 9,
  kF16 = 10,
  kF32 = 11,
  kF64 = 12,
};

// The memory kinds, as crates/kdsl-runtime/src/backend/sycl.rs encodes them.
enum MemoryKind : std::uint8_t { kDevice = 0, kShared = 1, kHost = 2 };

std::string backend_name(sycl::backend backend) {
  switch (backend) {
    case sycl::backend::opencl:
      return "opencl";
    case sycl::backend::ext_oneapi_level_zero:
      return "level_zero";
    case sycl::backend::ext_oneapi_cuda:
      return "cuda";
    case sycl::backend::ext_oneapi_hip:
      return "hip";
    default:
      return "other";
  }
}

std::string device_type_name(sycl::info::device_type type) {
  switch (type) {
    case sycl::info::device_type::cpu:
      return "cpu";
    case sycl::info::device_type::gpu:
      return "gpu";
    case sycl::info::device_type::accelerator:
      return "accelerator";
    default:
      return "other";
  }
}

template <typename T>
T value_from_bits(std::uint64_t bits) {
  T value;
  std::memcpy(&value, &bits, sizeof(T));
  return value;
}

void *as_pointer(std::uint64_t address) { return reinterpret_cast<void *>(address); }

}  // namespace

struct Queue::Impl {
 public:
  explicit Impl(const sycl::device &device)
      : errors_(std::make_shared<Errors>()),
        context_(device, make_handler(errors_)),
        queue_(context_, device, make_handler(errors_),
               sycl::property_list{sycl::property::queue::in_order(),
                                   sycl::property::queue::enable_profiling()}) {}

  sycl::queue &queue() const { return queue_; }
  const sycl::context &context() const { return context_; }

  // Waits for every submitted command and rethrows the first asynchronous error, if any.
  void wait_and_check() const {
    queue_.wait_and_throw();
    check_asynchronous();
  }

  void check_asynchronous() const {
    queue_.throw_asynchronous();
    std::lock_guard<std::mutex> lock(errors_->mutex);
    if (!errors_->messages.empty()) {
      std::string message = errors_->messages.front();
      errors_->messages.clear();
      throw std::runtime_error(message);
    }
  }

 private:
  struct Errors {
    std::mutex mutex;
    std::vector<std::string> messages;
  };

  static sycl::async_handler make_handler(std::shared_ptr<Errors> errors) {
    return [errors](sycl::exception_list list) {
      for (const std::exception_ptr &pointer : list) {
        try {
          std::rethrow_exception(pointer);
        } catch (const std::exception &error) {
          std::lock_guard<std::mutex> lock(errors->mutex);
          errors->messages.emplace_back(error.what());
        } catch (...) {
          std::lock_guard<std::mutex> lock(errors->mutex);
          errors->messages.emplace_back("unknown asynchronous SYCL error");
        }
      }
    };
  }

  std::shared_ptr<Errors> errors_;
  sycl::context context_;
  mutable sycl::queue queue_;
};

struct Program::Impl {
 public:
  explicit Impl(sycl::kernel_bundle<sycl::bundle_state::executable> bundle)
      : bundle_(std::move(bundle)) {}
  sycl::kernel_bundle<sycl::bundle_state::executable> &bundle() const { return bundle_; }

 private:
  mutable sycl::kernel_bundle<sycl::bundle_state::executable> bundle_;
};

struct Kernel::Impl {
 public:
  explicit Impl(sycl::kernel kernel) : kernel_(std::move(kernel)) {}
  const sycl::kernel &kernel() const { return kernel_; }

 private:
  sycl::kernel kernel_;
};

struct Event::Impl {
 public:
  Impl(sycl::event event, const Queue &queue) : event_(std::move(event)), queue_(queue) {}
  sycl::event &event() const { return event_; }
  const Queue &queue() const { return queue_; }

 private:
  mutable sycl::event event_;
  const Queue &queue_;  // the Rust side keeps the queue alive
};

#define KDSL_SYCL_OPAQUE_MEMBERS(Name) \
  Name::Name(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {} \
  Name::~Name() = default;

KDSL_SYCL_OPAQUE_MEMBERS(Queue)
KDSL_SYCL_OPAQUE_MEMBERS(Program)
KDSL_SYCL_OPAQUE_MEMBERS(Kernel)
KDSL_SYCL_OPAQUE_MEMBERS(Event)

#undef KDSL_SYCL_OPAQUE_MEMBERS

rust::Vec<DeviceDescription> list_devices() {
  rust::Vec<DeviceDescription> result;
  std::vector<sycl::device> devices = sycl::device::get_devices();
  for (std::size_t index = 0; index < devices.size(); ++index) {
    sycl::device &device = devices[index];
    DeviceDescription description;
    description.index = index;
    description.name = device.get_info<sycl::info::device::name>();
    description.vendor = device.get_info<sycl::info::device::vendor>();
    description.driver_version = device.get_info<sycl::info::device::driver_version>();
    description.backend = backend_name(device.get_backend());
    description.device_type = device_type_name(device.get_info<sycl::info::device::device_type>());
    description.global_memory_bytes = device.get_info<sycl::info::device::global_mem_size>();
    description.local_memory_bytes = device.get_info<sycl::info::device::local_mem_size>();
    description.compute_units = device.get_info<sycl::info::device::max_compute_units>();
    description.max_work_group_size = device.get_info<sycl::info::device::max_work_group_size>();
    try {
      description.supports_spirv = device.ext_oneapi_can_build(syclex::source_language::spirv);
    } catch (...) {
      description.supports_spirv = false;
    }
    result.push_back(std::move(description));
  }
  return result;
}

std::unique_ptr<Queue> create_queue(std::size_t index) {
  std::vector<sycl::device> devices = sycl::device::get_devices();
  if (index >= devices.size()) {
    throw std::runtime_error("SYCL device index " + std::to_string(index) + " is out of range (" +
                             std::to_string(devices.size()) + " devices)");
  }
  return std::make_unique<Queue>(std::make_unique<Queue::Impl>(devices[index]));
}

std::unique_ptr<Program> build_program(const Queue &queue, rust::Slice<const std::uint8_t> spirv) {
  std::vector<std::byte> bytes(spirv.size());
  std::memcpy(bytes.data(), spirv.data(), spirv.size());
  auto source = syclex::create_kernel_bundle_from_source(queue.impl().context(),
                                                         syclex::source_language::spirv, bytes);
  std::string log;
  try {
    auto executable = syclex::build(source, syclex::properties{syclex::save_log{&log}});
    return std::make_unique<Program>(std::make_unique<Program::Impl>(std::move(executable)));
  } catch (const sycl::exception &error) {
    std::string message = error.what();
    if (!log.empty()) message += "\nbuild log:\n" + log;
    throw std::runtime_error(message);
  }
}

std::unique_ptr<Kernel> program_kernel(const Program &program, rust::Str name) {
  std::string kernel_name(name.data(), name.size());
  auto &bundle = program.impl().bundle();
  if (!bundle.ext_oneapi_has_kernel(kernel_name)) {
    throw std::runtime_error("the SPIR-V module has no kernel named `" + kernel_name + "`");
  }
  return std::make_unique<Kernel>(std::make_unique<Kernel::Impl>(bundle.ext_oneapi_get_kernel(kernel_name)));
}

std::uint64_t allocate(const Queue &queue, std::size_t bytes, std::uint8_t kind) {
  void *pointer = nullptr;
  switch (kind) {
    case kDevice:
      pointer = sycl::malloc_device(bytes, queue.impl().queue());
      break;
    case kShared:
      pointer = sycl::malloc_shared(bytes, queue.impl().queue());
      break;
    case kHost:
      pointer = sycl::malloc_host(bytes, queue.impl().queue());
      break;
    default:
      throw std::runtime_error("unknown memory kind " + std::to_string(kind));
  }
  if (pointer == nullptr) {
    throw std::runtime_error("out of memory: the SYCL runtime could not allocate " +
                             std::to_string(bytes) + " bytes");
  }
  return reinterpret_cast<std::uint64_t>(pointer);
}

void release(const Queue &queue, std::uint64_t address) {
  queue.impl().queue().wait();
  sycl::free(as_pointer(address), queue.impl().context());
}

void copy_to_device(const Queue &queue, std::uint64_t address, rust::Slice<const std::uint8_t> data) {
  queue.impl().queue().memcpy(as_pointer(address), data.data(), data.size()).wait();
  queue.impl().check_asynchronous();
}

void copy_from_device(const Queue &queue, std::uint64_t address, rust::Slice<std::uint8_t> data) {
  queue.impl().queue().memcpy(data.data(), as_pointer(address), data.size()).wait();
  queue.impl().check_asynchronous();
}

void fill(const Queue &queue, std::uint64_t address, rust::Slice<const std::uint8_t> pattern,
          std::size_t count) {
  sycl::queue &q = queue.impl().queue();
  void *pointer = as_pointer(address);
  switch (pattern.size()) {
    case 1:
      q.memset(pointer, pattern[0], count).wait();
      break;
    case 2: {
      std::uint16_t value;
      std::memcpy(&value, pattern.data(), 2);
      q.fill(static_cast<std::uint16_t *>(pointer), value, count).wait();
      break;
    }
    case 4: {
      std::uint32_t value;
      std::memcpy(&value, pattern.data(), 4);
      q.fill(static_cast<std::uint32_t *>(pointer), value, count).wait();
      break;
    }
    case 8: {
      std::uint64_t value;
      std::memcpy(&value, pattern.data(), 8);
      q.fill(static_cast<std::uint64_t *>(pointer), value, count).wait();
      break;
    }
    default:
      throw std::runtime_error("fill supports 1-, 2-, 4- and 8-byte patterns, not " +
                               std::to_string(pattern.size()));
  }
  queue.impl().check_asynchronous();
}

void wait(const Queue &queue) { queue.impl().wait_and_check(); }

namespace {

void set_argument(sycl::handler &handler, int index, const KernelArgument &argument) {
  switch (argument.kind) {
    case kPointer:
      handler.set_arg(index, as_pointer(argument.bits));
      break;
    case kBool:
      handler.set_arg(index, static_cast<bool>(argument.bits != 0));
      break;
    case kI8:
      handler.set_arg(index, value_from_bits<std::int8_t>(argument.bits));
      break;
    case kU8:
      handler.set_arg(index, value_from_bits<std::uint8_t>(argument.bits));
      break;
    case kI16:
      handler.set_arg(index, value_from_bits<std::int16_t>(argument.bits));
      break;
    case kU16:
    case kF16:
      handler.set_arg(index, value_from_bits<std::uint16_t>(argument.bits));
      break;
    case kI32:
      handler.set_arg(index, value_from_bits<std::int32_t>(argument.bits));
      break;
    case kU32:
      handler.set_arg(index, value_from_bits<std::uint32_t>(argument.bits));
      break;
    case kI64:
      handler.set_arg(index, value_from_bits<std::int64_t>(argument.bits));
      break;
    case kU64:
      handler.set_arg(index, value_from_bits<std::uint64_t>(argument.bits));
      break;
    case kF32:
      handler.set_arg(index, value_from_bits<float>(argument.bits));
      break;
    case kF64:
      handler.set_arg(index, value_from_bits<double>(argument.bits));
      break;
    default:
      throw std::runtime_error("unknown kernel argument kind " + std::to_string(argument.kind));
  }
}

// kdsl's dimension 0 is the fastest-varying one (OpenCL's convention, and what get_global_id(0)
// means in the SPIR-V), while SYCL's last dimension is the fastest. So kdsl's [g0, g1, g2] becomes
// sycl::range(g2, g1, g0); the suite's 2-D global_ids test checks this mapping.
template <int Dimensions>
sycl::nd_range<Dimensions> make_range(rust::Slice<const std::uint64_t> global,
                                      rust::Slice<const std::uint64_t> local);

template <>
sycl::nd_range<1> make_range<1>(rust::Slice<const std::uint64_t> global,
                                rust::Slice<const std::uint64_t> local) {
  return sycl::nd_range<1>(sycl::range<1>(global[0]), sycl::range<1>(local[0]));
}

template <>
sycl::nd_range<2> make_range<2>(rust::Slice<const std::uint64_t> global,
                                rust::Slice<const std::uint64_t> local) {
  return sycl::nd_range<2>(sycl::range<2>(global[1], global[0]), sycl::range<2>(local[1], local[0]));
}

template <>
sycl::nd_range<3> make_range<3>(rust::Slice<const std::uint64_t> global,
                                rust::Slice<const std::uint64_t> local) {
  return sycl::nd_range<3>(sycl::range<3>(global[2], global[1], global[0]),
                           sycl::range<3>(local[2], local[1], local[0]));
}

template <int Dimensions>
sycl::event submit(sycl::queue &queue, const sycl::kernel &kernel,
                   rust::Slice<const std::uint64_t> global, rust::Slice<const std::uint64_t> local,
                   rust::Slice<const KernelArgument> arguments) {
  return queue.submit([&](sycl::handler &handler) {
    for (std::size_t index = 0; index < arguments.size(); ++index) {
      set_argument(handler, static_cast<int>(index), arguments[index]);
    }
    handler.parallel_for(make_range<Dimensions>(global, local), kernel);
  });
}

}  // namespace

std::unique_ptr<Event> launch(const Queue &queue, const Kernel &kernel,
                              rust::Slice<const std::uint64_t> global,
                              rust::Slice<const std::uint64_t> local,
                              rust::Slice<const KernelArgument> arguments) {
  if (global.size() != local.size() || global.empty() || global.size() > 3) {
    throw std::runtime_error("a launch needs 1 to 3 dimensions, with as many local sizes");
  }
  sycl::event event;
  switch (global.size()) {
    case 1:
      event = submit<1>(queue.impl().queue(), kernel.impl().kernel(), global, local, arguments);
      break;
    case 2:
      event = submit<2>(queue.impl().queue(), kernel.impl().kernel(), global, local, arguments);
      break;
    default:
      event = submit<3>(queue.impl().queue(), kernel.impl().kernel(), global, local, arguments);
      break;
  }
  queue.impl().check_asynchronous();
  return std::make_unique<Event>(std::make_unique<Event::Impl>(std::move(event), queue));
}

void event_wait(const Event &event) {
  event.impl().event().wait_and_throw();
  event.impl().queue().impl().check_asynchronous();
}

std::uint64_t event_elapsed_ns(const Event &event) {
  event_wait(event);
  auto start = event.impl().event().get_profiling_info<sycl::info::event_profiling::command_start>();
  auto end = event.impl().event().get_profiling_info<sycl::info::event_profiling::command_end>();
  return end >= start ? end - start : 0;
}

}  // namespace kdsl_sycl
