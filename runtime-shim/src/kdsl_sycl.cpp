// The SYCL backend of kdsl-runtime: device discovery, queues, SPIR-V kernel bundles, USM memory
// and nd_range launches, on the Intel SYCL runtime (libsycl), compiled as plain host C++17.
// It is built into libkdsl_sycl_shim.so, the only library that links libsycl, and exposes the C
// interface of kdsl_sycl_shim.h; kdsl_sycl_loader.cpp opens it at run time.

#include "kdsl_sycl_shim.h"

#include "kdsl_spirv_validate.h"
#include "kdsl_sycl_opencl.h"
#include <sycl/sycl.hpp>
#include <sycl/ext/oneapi/experimental/enqueue_functions.hpp>
#include <sycl/ext/oneapi/experimental/syclbin_kernel_bundle.hpp>

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace syclex = sycl::ext::oneapi::experimental;

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
  // Local memory of `bits` bytes for a `local mut [T]` parameter: a Workgroup pointer in
  // SPIR-V; on SYCL's CUDA and HIP devices the adapter passes its byte offset into the launch's
  // dynamic local memory, which kdsl's PTX and AMDGPU kernels take.
  kLocal = 13,
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

thread_local std::string last_error;

// Runs `body`, turning any exception into a nonzero result and the thread's last error.
template <typename Body>
int guarded(Body &&body) noexcept {
  try {
    body();
    return 0;
  } catch (const std::exception &error) {
    try {
      last_error = error.what();
    } catch (...) {
    }
  } catch (...) {
    try {
      last_error = "unknown C++ exception in the SYCL runtime";
    } catch (...) {
    }
  }
  return 1;
}

}  // namespace

struct kdsl_sycl_queue {
 public:
  // A new in-order, profiling queue with its own context.
  explicit kdsl_sycl_queue(const sycl::device &device)
      : errors_(std::make_shared<Errors>()),
        context_(device, make_handler(errors_)),
        queue_(context_, device, make_handler(errors_), own_queue_properties()),
        in_order_(true) {}

  // A further in-order queue on the context and device of `sibling`.
  kdsl_sycl_queue(const kdsl_sycl_queue &sibling, bool profiled)
      : errors_(sibling.errors_),
        context_(sibling.context_),
        queue_(context_, sibling.queue_.get_device(), make_handler(errors_),
               profiled ? own_queue_properties()
                        : sycl::property_list{sycl::property::queue::in_order()}),
        in_order_(true) {}

  // Another library's queue, shared (a sycl::queue is a reference-counted handle).
  explicit kdsl_sycl_queue(const sycl::queue &adopted)
      : errors_(std::make_shared<Errors>()),
        context_(adopted.get_context()),
        queue_(adopted),
        in_order_(adopted.is_in_order()) {}

  sycl::queue &queue() const { return queue_; }
  const sycl::context &context() const { return context_; }
  bool in_order() const { return in_order_; }

  // Submits `body` after `dependencies`. On an adopted out-of-order queue kdsl's own submissions
  // are chained, so they run in submission order like on kdsl's own queues.
  template <typename Body>
  sycl::event submit(std::vector<sycl::event> dependencies, Body &&body) const {
    std::unique_lock<std::mutex> lock(chain_mutex_, std::defer_lock);
    if (!in_order_) {
      lock.lock();
      if (last_submitted_) dependencies.push_back(*last_submitted_);
    }
    sycl::event submitted = queue_.submit([&](sycl::handler &handler) {
      if (!dependencies.empty()) handler.depends_on(dependencies);
      body(handler);
    });
    if (!in_order_) last_submitted_ = submitted;
    return submitted;
  }

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

  static sycl::property_list own_queue_properties() {
    return sycl::property_list{sycl::property::queue::in_order(),
                               sycl::property::queue::enable_profiling()};
  }

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
  bool in_order_;
  mutable std::mutex chain_mutex_;
  mutable std::optional<sycl::event> last_submitted_;
};

// A built program: a SYCL kernel bundle, or an OpenCL program made from a cached device binary.
struct kdsl_sycl_program {
 public:
  explicit kdsl_sycl_program(sycl::kernel_bundle<sycl::bundle_state::executable> bundle)
      : bundle_(std::move(bundle)) {}
  explicit kdsl_sycl_program(std::unique_ptr<kdsl_opencl::NativeProgram> native)
      : native_(std::move(native)) {}

  sycl::kernel kernel(const std::string &name) const {
    if (native_) return native_->kernel(name);
    if (!bundle_->ext_oneapi_has_kernel(name)) {
      throw std::runtime_error("the kernel bundle has no kernel named `" + name + "`");
    }
    return bundle_->ext_oneapi_get_kernel(name);
  }
  // The SYCL kernel bundle, absent for a program made from a device binary.
  const std::optional<sycl::kernel_bundle<sycl::bundle_state::executable>> &bundle() const {
    return bundle_;
  }

 private:
  mutable std::optional<sycl::kernel_bundle<sycl::bundle_state::executable>> bundle_;
  std::unique_ptr<kdsl_opencl::NativeProgram> native_;
};

struct kdsl_sycl_kernel {
 public:
  explicit kdsl_sycl_kernel(sycl::kernel kernel) : kernel_(std::move(kernel)) {}
  const sycl::kernel &kernel() const { return kernel_; }

 private:
  sycl::kernel kernel_;
};

struct kdsl_sycl_event {
 public:
  kdsl_sycl_event(sycl::event event, const kdsl_sycl_queue &queue)
      : event_(std::move(event)), queue_(queue) {}
  sycl::event &event() const { return event_; }
  const kdsl_sycl_queue &queue() const { return queue_; }

 private:
  mutable sycl::event event_;
  const kdsl_sycl_queue &queue_;  // the Rust side keeps the queue alive
};


namespace {

void set_argument(sycl::handler &handler, int index, const kdsl_sycl_kernel_argument &argument) {
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
    case kLocal: {
      // Work-group memory is one local argument of its size (clSetKernelArg(index, size, NULL)
      // on OpenCL) in every kernel. A local_accessor is that only in a kernel SYCL built from
      // source; in one from a SYCLBIN it adds three range arguments (handler::processArg).
      // Devices refuse local arguments of 0 bytes.
      syclex::work_group_memory<std::uint8_t[]> memory(
          std::max<std::uint64_t>(argument.bits, 1), handler);
      handler.set_arg(index, memory);
      break;
    }
    default:
      throw std::runtime_error("unknown kernel argument kind " + std::to_string(argument.kind));
  }
}

// kdsl's dimension 0 is the fastest-varying one (OpenCL's convention, and what get_global_id(0)
// means in the SPIR-V), while SYCL's last dimension is the fastest. So kdsl's [g0, g1, g2] becomes
// sycl::range(g2, g1, g0); the suite's 2-D global_ids test checks this mapping.
template <int Dimensions>
sycl::nd_range<Dimensions> make_range(const std::uint64_t *global, const std::uint64_t *local);

template <>
sycl::nd_range<1> make_range<1>(const std::uint64_t *global, const std::uint64_t *local) {
  return sycl::nd_range<1>(sycl::range<1>(global[0]), sycl::range<1>(local[0]));
}

template <>
sycl::nd_range<2> make_range<2>(const std::uint64_t *global, const std::uint64_t *local) {
  return sycl::nd_range<2>(sycl::range<2>(global[1], global[0]), sycl::range<2>(local[1], local[0]));
}

template <>
sycl::nd_range<3> make_range<3>(const std::uint64_t *global, const std::uint64_t *local) {
  return sycl::nd_range<3>(sycl::range<3>(global[2], global[1], global[0]),
                           sycl::range<3>(local[2], local[1], local[0]));
}

// kdsl's global sizes as a SYCL range, for launches whose work-group size the SYCL runtime
// chooses (kdsl passes local sizes of 0).
template <int Dimensions>
sycl::range<Dimensions> make_global_range(const std::uint64_t *global);

template <>
sycl::range<1> make_global_range<1>(const std::uint64_t *global) {
  return sycl::range<1>(global[0]);
}

template <>
sycl::range<2> make_global_range<2>(const std::uint64_t *global) {
  return sycl::range<2>(global[1], global[0]);
}

template <>
sycl::range<3> make_global_range<3>(const std::uint64_t *global) {
  return sycl::range<3>(global[2], global[1], global[0]);
}

// Launches `kernel` over kdsl's sizes: an nd_range, or a plain range when `local` is 0.
template <int Dimensions>
void parallel_for(sycl::handler &handler, const sycl::kernel &kernel, const std::uint64_t *global,
                  const std::uint64_t *local) {
  if (local[0] == 0) {
    handler.parallel_for(make_global_range<Dimensions>(global), kernel);
  } else {
    handler.parallel_for(make_range<Dimensions>(global, local), kernel);
  }
}

std::vector<sycl::event> dependencies(const kdsl_sycl_event *const *wait_for,
                                      std::size_t wait_count) {
  std::vector<sycl::event> events;
  events.reserve(wait_count);
  for (std::size_t index = 0; index < wait_count; ++index) {
    events.push_back(wait_for[index]->event());
  }
  return events;
}

template <int Dimensions>
sycl::event submit_launch(const kdsl_sycl_queue &queue, const sycl::kernel &kernel,
                          const std::uint64_t *global, const std::uint64_t *local,
                          const kdsl_sycl_kernel_argument *arguments,
                          std::size_t argument_count, std::vector<sycl::event> waits) {
  return queue.submit(std::move(waits), [&](sycl::handler &handler) {
    for (std::size_t index = 0; index < argument_count; ++index) {
      set_argument(handler, static_cast<int>(index), arguments[index]);
    }
    parallel_for<Dimensions>(handler, kernel, global, local);
  });
}

template <int Dimensions>
void submit_launch_without_event(const kdsl_sycl_queue &queue, const sycl::kernel &kernel,
                                 const std::uint64_t *global, const std::uint64_t *local,
                                 const kdsl_sycl_kernel_argument *arguments,
                                 std::size_t argument_count) {
  syclex::submit(queue.queue(), [&](sycl::handler &handler) {
    for (std::size_t index = 0; index < argument_count; ++index) {
      set_argument(handler, static_cast<int>(index), arguments[index]);
    }
    parallel_for<Dimensions>(handler, kernel, global, local);
  });
}

template <typename T>
void fill_pattern(sycl::handler &handler, void *pointer, const std::uint8_t *pattern,
                  std::size_t count) {
  T value;
  std::memcpy(&value, pattern, sizeof(T));
  handler.fill(static_cast<T *>(pointer), value, count);
}

void wait_for_event(const kdsl_sycl_event &event) {
  event.event().wait_and_throw();
  event.queue().check_asynchronous();
}

}  // namespace

extern "C" {

unsigned kdsl_sycl_interface_version(void) { return KDSL_SYCL_SHIM_INTERFACE_VERSION; }

const char *kdsl_sycl_last_error(void) { return last_error.c_str(); }

int kdsl_sycl_list_devices(kdsl_sycl_device_visitor visitor, void *context) {
  return guarded([&] {
    std::vector<sycl::device> devices = sycl::device::get_devices();
    for (std::size_t index = 0; index < devices.size(); ++index) {
      sycl::device &device = devices[index];
      std::string name = device.get_info<sycl::info::device::name>();
      std::string vendor = device.get_info<sycl::info::device::vendor>();
      std::string driver_version = device.get_info<sycl::info::device::driver_version>();
      std::string device_version = device.get_info<sycl::info::device::version>();
      std::string backend = backend_name(device.get_backend());
      std::string device_type =
          device_type_name(device.get_info<sycl::info::device::device_type>());
      kdsl_sycl_device_description description{};
      description.index = index;
      description.name = name.c_str();
      description.vendor = vendor.c_str();
      description.driver_version = driver_version.c_str();
      description.device_version = device_version.c_str();
      description.backend = backend.c_str();
      description.device_type = device_type.c_str();
      description.global_memory_bytes = device.get_info<sycl::info::device::global_mem_size>();
      description.local_memory_bytes = device.get_info<sycl::info::device::local_mem_size>();
      description.compute_units = device.get_info<sycl::info::device::max_compute_units>();
      description.max_work_group_size = device.get_info<sycl::info::device::max_work_group_size>();
      std::vector<std::uint32_t> sub_group_sizes;
      for (std::size_t size : device.get_info<sycl::info::device::sub_group_sizes>()) {
        sub_group_sizes.push_back(static_cast<std::uint32_t>(size));
      }
      description.sub_group_sizes = sub_group_sizes.data();
      description.sub_group_size_count = sub_group_sizes.size();
      try {
        description.supports_spirv =
            device.ext_oneapi_can_build(syclex::source_language::spirv) ? 1 : 0;
      } catch (...) {
        description.supports_spirv = 0;
      }
      const char *message = nullptr;
      if (visitor(context, &description, &message) != 0) {
        throw std::runtime_error(message != nullptr ? message : "device listing stopped");
      }
    }
  });
}

int kdsl_sycl_create_queue(std::size_t index, kdsl_sycl_queue **queue) {
  return guarded([&] {
    std::vector<sycl::device> devices = sycl::device::get_devices();
    if (index >= devices.size()) {
      throw std::runtime_error("SYCL device index " + std::to_string(index) +
                               " is out of range (" + std::to_string(devices.size()) +
                               " devices)");
    }
    *queue = new kdsl_sycl_queue(devices[index]);
  });
}

int kdsl_sycl_create_sibling_queue(const kdsl_sycl_queue *queue, int profiled,
                                   kdsl_sycl_queue **sibling) {
  return guarded([&] { *sibling = new kdsl_sycl_queue(*queue, profiled != 0); });
}

int kdsl_sycl_adopt_queue(const void *sycl_queue, kdsl_sycl_queue **queue,
                          std::size_t *device_index) {
  return guarded([&] {
    if (sycl_queue == nullptr) throw std::runtime_error("the SYCL queue pointer is null");
    const sycl::queue &adopted = *static_cast<const sycl::queue *>(sycl_queue);
    sycl::device device = adopted.get_device();
    std::vector<sycl::device> devices = sycl::device::get_devices();
    std::size_t index = 0;
    while (index < devices.size() && devices[index] != device) ++index;
    if (index == devices.size()) {
      throw std::runtime_error("the queue's device (" +
                               device.get_info<sycl::info::device::name>() +
                               ") is not a root device of sycl::device::get_devices()");
    }
    *queue = new kdsl_sycl_queue(adopted);
    *device_index = index;
  });
}

void kdsl_sycl_destroy_queue(kdsl_sycl_queue *queue) { delete queue; }

int kdsl_sycl_validate_spirv(const std::uint8_t *spirv, std::size_t size) {
  return guarded([&] {
    char message[1024];
    if (kdsl_spirv_validate(spirv, size, message, sizeof message) != 0) {
      throw std::runtime_error(message);
    }
  });
}

int kdsl_sycl_build_program(const kdsl_sycl_queue *queue, const std::uint8_t *spirv,
                            std::size_t size, kdsl_sycl_program **program) {
  return guarded([&] {
    std::vector<std::byte> bytes(size);
    if (size > 0) std::memcpy(bytes.data(), spirv, size);
    auto source = syclex::create_kernel_bundle_from_source(
        queue->context(), syclex::source_language::spirv, bytes);
    std::string log;
    try {
      auto executable = syclex::build(source, syclex::properties{syclex::save_log{&log}});
      *program = new kdsl_sycl_program(std::move(executable));
    } catch (const sycl::exception &error) {
      std::string message = error.what();
      if (!log.empty()) message += "\nbuild log:\n" + log;
      throw std::runtime_error(message);
    }
  });
}

int kdsl_sycl_load_syclbin(const kdsl_sycl_queue *queue, const std::uint8_t *syclbin,
                           std::size_t size, kdsl_sycl_program **program) {
  return guarded([&] {
    std::vector<char> bytes(size);
    if (size > 0) std::memcpy(bytes.data(), syclbin, size);
    auto bundle = syclex::get_kernel_bundle<sycl::bundle_state::executable>(
        queue->context(), {queue->queue().get_device()}, sycl::span<char>(bytes.data(), size));
    *program = new kdsl_sycl_program(std::move(bundle));
  });
}

int kdsl_sycl_program_binary(const kdsl_sycl_program *program, kdsl_sycl_bytes_sink sink,
                             void *context) {
  return guarded([&] {
    if (!program->bundle()) throw std::runtime_error("the program was made from a binary");
    std::vector<std::uint8_t> binary = kdsl_opencl::program_binary(*program->bundle());
    sink(context, binary.data(), binary.size());
  });
}

int kdsl_sycl_program_from_binary(const kdsl_sycl_queue *queue, const std::uint8_t *binary,
                                  std::size_t size, kdsl_sycl_program **program) {
  return guarded([&] {
    std::unique_ptr<kdsl_opencl::NativeProgram> native(kdsl_opencl::program_from_binary(
        queue->context(), queue->queue().get_device(), binary, size));
    *program = new kdsl_sycl_program(std::move(native));
  });
}

int kdsl_sycl_queue_device_identity(const kdsl_sycl_queue *queue, kdsl_sycl_bytes_sink sink,
                                    void *context) {
  return guarded([&] {
    sycl::device device = queue->queue().get_device();
    std::string identity = backend_name(device.get_backend()) + "\n" +
                           device.get_info<sycl::info::device::name>() + "\n" +
                           device.get_info<sycl::info::device::vendor>() + "\n" +
                           device.get_info<sycl::info::device::driver_version>() + "\n" +
                           device.get_info<sycl::info::device::version>();
    sink(context, reinterpret_cast<const std::uint8_t *>(identity.data()), identity.size());
  });
}

void kdsl_sycl_destroy_program(kdsl_sycl_program *program) { delete program; }

int kdsl_sycl_program_kernel(const kdsl_sycl_program *program, const char *name,
                             std::size_t name_length, kdsl_sycl_kernel **kernel) {
  return guarded([&] {
    *kernel = new kdsl_sycl_kernel(program->kernel(std::string(name, name_length)));
  });
}

void kdsl_sycl_destroy_kernel(kdsl_sycl_kernel *kernel) { delete kernel; }

int kdsl_sycl_allocate(const kdsl_sycl_queue *queue, std::size_t bytes, std::uint8_t kind,
                       std::uint64_t *address) {
  return guarded([&] {
    void *pointer = nullptr;
    switch (kind) {
      case kDevice:
        pointer = sycl::malloc_device(bytes, queue->queue());
        break;
      case kShared:
        pointer = sycl::malloc_shared(bytes, queue->queue());
        break;
      case kHost:
        pointer = sycl::malloc_host(bytes, queue->queue());
        break;
      default:
        throw std::runtime_error("unknown memory kind " + std::to_string(kind));
    }
    if (pointer == nullptr) {
      throw std::runtime_error("out of memory: the SYCL runtime could not allocate " +
                               std::to_string(bytes) + " bytes");
    }
    *address = reinterpret_cast<std::uint64_t>(pointer);
  });
}

int kdsl_sycl_release(const kdsl_sycl_queue *queue, std::uint64_t address) {
  return guarded([&] { sycl::free(as_pointer(address), queue->context()); });
}

int kdsl_sycl_copy(const kdsl_sycl_queue *queue, std::uint64_t destination, std::uint64_t source,
                   std::size_t size, const kdsl_sycl_event *const *wait_for,
                   std::size_t wait_count, kdsl_sycl_event **event) {
  return guarded([&] {
    sycl::event submitted =
        queue->submit(dependencies(wait_for, wait_count), [&](sycl::handler &handler) {
          handler.memcpy(as_pointer(destination), as_pointer(source), size);
        });
    queue->check_asynchronous();
    *event = new kdsl_sycl_event(std::move(submitted), *queue);
  });
}

int kdsl_sycl_fill(const kdsl_sycl_queue *queue, std::uint64_t address,
                   const std::uint8_t *pattern, std::size_t pattern_size, std::size_t count,
                   const kdsl_sycl_event *const *wait_for, std::size_t wait_count,
                   kdsl_sycl_event **event) {
  return guarded([&] {
    if (pattern_size != 1 && pattern_size != 2 && pattern_size != 4 && pattern_size != 8) {
      throw std::runtime_error("fill supports 1-, 2-, 4- and 8-byte patterns, not " +
                               std::to_string(pattern_size));
    }
    void *pointer = as_pointer(address);
    sycl::event submitted =
        queue->submit(dependencies(wait_for, wait_count), [&](sycl::handler &handler) {
          switch (pattern_size) {
            case 1:
              handler.memset(pointer, pattern[0], count);
              break;
            case 2:
              fill_pattern<std::uint16_t>(handler, pointer, pattern, count);
              break;
            case 4:
              fill_pattern<std::uint32_t>(handler, pointer, pattern, count);
              break;
            default:
              fill_pattern<std::uint64_t>(handler, pointer, pattern, count);
              break;
          }
        });
    queue->check_asynchronous();
    *event = new kdsl_sycl_event(std::move(submitted), *queue);
  });
}

int kdsl_sycl_wait(const kdsl_sycl_queue *queue) {
  return guarded([&] { queue->wait_and_check(); });
}

int kdsl_sycl_launch(const kdsl_sycl_queue *queue, const kdsl_sycl_kernel *kernel,
                     const std::uint64_t *global, const std::uint64_t *local,
                     std::size_t dimensions, const kdsl_sycl_kernel_argument *arguments,
                     std::size_t argument_count, const kdsl_sycl_event *const *wait_for,
                     std::size_t wait_count, kdsl_sycl_event **event) {
  return guarded([&] {
    if (dimensions == 0 || dimensions > 3) {
      throw std::runtime_error("a launch needs 1 to 3 dimensions, with as many local sizes");
    }
    std::vector<sycl::event> waits = dependencies(wait_for, wait_count);
    sycl::event submitted;
    switch (dimensions) {
      case 1:
        submitted = submit_launch<1>(*queue, kernel->kernel(), global, local, arguments,
                                     argument_count, std::move(waits));
        break;
      case 2:
        submitted = submit_launch<2>(*queue, kernel->kernel(), global, local, arguments,
                                     argument_count, std::move(waits));
        break;
      default:
        submitted = submit_launch<3>(*queue, kernel->kernel(), global, local, arguments,
                                     argument_count, std::move(waits));
        break;
    }
    queue->check_asynchronous();
    *event = new kdsl_sycl_event(std::move(submitted), *queue);
  });
}

int kdsl_sycl_queue_facts(const kdsl_sycl_queue *queue, int *in_order, int *profiled) {
  return guarded([&] {
    *in_order = queue->in_order() ? 1 : 0;
    *profiled =
        queue->queue().has_property<sycl::property::queue::enable_profiling>() ? 1 : 0;
  });
}

int kdsl_sycl_launch_without_event(const kdsl_sycl_queue *queue, const kdsl_sycl_kernel *kernel,
                                   const std::uint64_t *global, const std::uint64_t *local,
                                   std::size_t dimensions,
                                   const kdsl_sycl_kernel_argument *arguments,
                                   std::size_t argument_count) {
  return guarded([&] {
    if (dimensions == 0 || dimensions > 3) {
      throw std::runtime_error("a launch needs 1 to 3 dimensions, with as many local sizes");
    }
    if (!queue->in_order()) {
      throw std::runtime_error("a launch without an event needs an in-order queue");
    }
    switch (dimensions) {
      case 1:
        submit_launch_without_event<1>(*queue, kernel->kernel(), global, local, arguments,
                                       argument_count);
        break;
      case 2:
        submit_launch_without_event<2>(*queue, kernel->kernel(), global, local, arguments,
                                       argument_count);
        break;
      default:
        submit_launch_without_event<3>(*queue, kernel->kernel(), global, local, arguments,
                                       argument_count);
        break;
    }
    queue->check_asynchronous();
  });
}

int kdsl_sycl_submit_marker(const kdsl_sycl_queue *queue, kdsl_sycl_event **event) {
  return guarded([&] {
    sycl::event marker = queue->queue().ext_oneapi_submit_barrier();
    *event = new kdsl_sycl_event(std::move(marker), *queue);
  });
}

int kdsl_sycl_event_from_native(const kdsl_sycl_queue *queue, const void *sycl_event,
                                kdsl_sycl_event **event) {
  return guarded([&] {
    if (sycl_event == nullptr) throw std::runtime_error("a foreign SYCL event is null");
    *event = new kdsl_sycl_event(*static_cast<const sycl::event *>(sycl_event), *queue);
  });
}

int kdsl_sycl_event_native(const kdsl_sycl_event *event, const void **sycl_event) {
  return guarded([&] { *sycl_event = &event->event(); });
}

int kdsl_sycl_kernel_native(const kdsl_sycl_kernel *kernel, const void **sycl_kernel) {
  return guarded([&] { *sycl_kernel = &kernel->kernel(); });
}

int kdsl_sycl_new_native_queue(std::size_t index, void **sycl_queue) {
  return guarded([&] {
    std::vector<sycl::device> devices = sycl::device::get_devices();
    if (index >= devices.size()) {
      throw std::runtime_error("SYCL device index " + std::to_string(index) + " is out of range");
    }
    *sycl_queue = new sycl::queue(devices[index], sycl::property::queue::in_order());
  });
}

void kdsl_sycl_delete_native_queue(void *sycl_queue) {
  delete static_cast<sycl::queue *>(sycl_queue);
}

void kdsl_sycl_destroy_event(kdsl_sycl_event *event) { delete event; }

int kdsl_sycl_event_wait(const kdsl_sycl_event *event) {
  return guarded([&] { wait_for_event(*event); });
}

int kdsl_sycl_event_is_complete(const kdsl_sycl_event *event, int *complete) {
  return guarded([&] {
    auto status = event->event().get_info<sycl::info::event::command_execution_status>();
    *complete = status == sycl::info::event_command_status::complete ? 1 : 0;
  });
}

int kdsl_sycl_event_elapsed_ns(const kdsl_sycl_event *event, std::uint64_t *nanoseconds) {
  return guarded([&] {
    wait_for_event(*event);
    auto start =
        event->event().get_profiling_info<sycl::info::event_profiling::command_start>();
    auto end = event->event().get_profiling_info<sycl::info::event_profiling::command_end>();
    *nanoseconds = end >= start ? end - start : 0;
  });
}

}  // extern "C"
