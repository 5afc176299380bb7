// The C interface of libkdsl_sycl_shim.so, the shared library that holds kdsl-runtime's SYCL code
// and is the only thing that links libsycl. The loader (kdsl_sycl_loader.cpp, inside every Rust
// binary) opens it with dlopen, so a machine without the SYCL runtime gets an error at device
// discovery instead of a failure in the dynamic loader.
//
// Conventions: functions returning int return 0 on success and nonzero on failure, in which case
// kdsl_sycl_last_error() returns the message (per thread, valid until the thread's next call).
// No C++ exception leaves this library. Handles are freed with their destroy function.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Bumped whenever a signature or struct below changes; the loader refuses any other version.
#define KDSL_SYCL_SHIM_INTERFACE_VERSION 13u

typedef struct kdsl_sycl_queue kdsl_sycl_queue;
typedef struct kdsl_sycl_program kdsl_sycl_program;
typedef struct kdsl_sycl_kernel kdsl_sycl_kernel;
typedef struct kdsl_sycl_event kdsl_sycl_event;

// The strings are valid only during the visitor call that receives them.
typedef struct kdsl_sycl_device_description {
  size_t index;
  const char *name;
  const char *vendor;
  const char *driver_version;
  // sycl::info::device::version: the compute capability ("9.0") on CUDA devices, the processor
  // ("gfx90a:...") on HIP devices, the OpenCL version otherwise.
  const char *device_version;
  const char *backend;
  const char *device_type;
  uint64_t global_memory_bytes;
  uint64_t local_memory_bytes;
  uint32_t compute_units;
  uint64_t max_work_group_size;
  int supports_spirv;
  const uint32_t *sub_group_sizes;
  size_t sub_group_size_count;
} kdsl_sycl_device_description;

// Returns 0 to continue; anything else stops the listing, which then fails with `message` as
// the error (the visitor sets it; it may stay null).
typedef int (*kdsl_sycl_device_visitor)(void *context,
                                        const kdsl_sycl_device_description *description,
                                        const char **message);

// One kernel argument: `kind` is the ArgumentKind code of kdsl_sycl.cpp, `bits` the value.
typedef struct kdsl_sycl_kernel_argument {
  uint8_t kind;
  uint64_t bits;
} kdsl_sycl_kernel_argument;

unsigned kdsl_sycl_interface_version(void);
const char *kdsl_sycl_last_error(void);

int kdsl_sycl_list_devices(kdsl_sycl_device_visitor visitor, void *context);

// A new in-order, profiling queue with its own context on device `index` of sycl::device::get_devices().
int kdsl_sycl_create_queue(size_t index, kdsl_sycl_queue **queue);
// A further in-order queue on the same context and device as `queue`, profiling when `profiled`.
int kdsl_sycl_create_sibling_queue(const kdsl_sycl_queue *queue, int profiled,
                                   kdsl_sycl_queue **sibling);
// Adopts a `sycl::queue *` of this libsycl (copies the handle); `device_index` is the queue's device
// in sycl::device::get_devices(). kdsl's own submissions to an out-of-order queue are chained in order.
int kdsl_sycl_adopt_queue(const void *sycl_queue, kdsl_sycl_queue **queue, size_t *device_index);
void kdsl_sycl_destroy_queue(kdsl_sycl_queue *queue);

// Validates a SPIR-V module with SPIRV-Tools (linked into the shim) before any driver sees it:
// 0 when valid, nonzero with the validator's message as the last error.
int kdsl_sycl_validate_spirv(const uint8_t *spirv, size_t size);

int kdsl_sycl_build_program(const kdsl_sycl_queue *queue, const uint8_t *spirv, size_t size,
                            kdsl_sycl_program **program);
// An executable kernel bundle from a SYCLBIN file (sycl_ext_oneapi_syclbin), for the queue's
// device; the runtime picks the image that fits it.
int kdsl_sycl_load_syclbin(const kdsl_sycl_queue *queue, const uint8_t *syclbin, size_t size,
                           kdsl_sycl_program **program);
// Receives bytes that are valid only during the call.
typedef void (*kdsl_sycl_bytes_sink)(void *context, const uint8_t *bytes, size_t size);
// The device's native binary of a program built from SPIR-V (OpenCL devices only:
// CL_PROGRAM_BINARIES), handed to `sink`; fails on other backends.
int kdsl_sycl_program_binary(const kdsl_sycl_program *program, kdsl_sycl_bytes_sink sink,
                             void *context);
// A program made from a binary of kdsl_sycl_program_binary for the queue's device, built by the
// driver without compiling SPIR-V; fails (the caller then builds the SPIR-V) when it refuses it.
int kdsl_sycl_program_from_binary(const kdsl_sycl_queue *queue, const uint8_t *binary,
                                  size_t size, kdsl_sycl_program **program);
// What identifies the queue's device and driver for a native binary: backend, name, vendor,
// driver version and device version, one per line.
int kdsl_sycl_queue_device_identity(const kdsl_sycl_queue *queue, kdsl_sycl_bytes_sink sink,
                                    void *context);
void kdsl_sycl_destroy_program(kdsl_sycl_program *program);

int kdsl_sycl_program_kernel(const kdsl_sycl_program *program, const char *name,
                             size_t name_length, kdsl_sycl_kernel **kernel);
void kdsl_sycl_destroy_kernel(kdsl_sycl_kernel *kernel);

int kdsl_sycl_allocate(const kdsl_sycl_queue *queue, size_t bytes, uint8_t kind,
                       uint64_t *address);
// Frees at once: the caller makes sure no submitted work still uses the memory.
int kdsl_sycl_release(const kdsl_sycl_queue *queue, uint64_t address);

// Every submission below starts after the `wait_count` events in `wait_for` and after the queue's
// earlier work, does not block, and gives an event to destroy with kdsl_sycl_destroy_event.
int kdsl_sycl_copy(const kdsl_sycl_queue *queue, uint64_t destination, uint64_t source, size_t size,
                   const kdsl_sycl_event *const *wait_for, size_t wait_count,
                   kdsl_sycl_event **event);
int kdsl_sycl_fill(const kdsl_sycl_queue *queue, uint64_t address, const uint8_t *pattern,
                   size_t pattern_size, size_t count, const kdsl_sycl_event *const *wait_for,
                   size_t wait_count, kdsl_sycl_event **event);
// `global` and `local` hold `dimensions` sizes each, in kdsl's order (dimension 0 first); local
// sizes of 0 leave the work-group size to the SYCL runtime (`parallel_for(range)`).
int kdsl_sycl_launch(const kdsl_sycl_queue *queue, const kdsl_sycl_kernel *kernel,
                     const uint64_t *global, const uint64_t *local, size_t dimensions,
                     const kdsl_sycl_kernel_argument *arguments, size_t argument_count,
                     const kdsl_sycl_event *const *wait_for, size_t wait_count,
                     kdsl_sycl_event **event);
int kdsl_sycl_wait(const kdsl_sycl_queue *queue);

// Whether the queue runs its work in order and times it (profiling enabled).
int kdsl_sycl_queue_facts(const kdsl_sycl_queue *queue, int *in_order, int *profiled);
// A launch on an in-order queue that makes no event (SYCL's submit_without_event, the cheapest
// submission); completion is learnt from a later marker. Refused on out-of-order queues.
int kdsl_sycl_launch_without_event(const kdsl_sycl_queue *queue, const kdsl_sycl_kernel *kernel,
                                   const uint64_t *global, const uint64_t *local,
                                   size_t dimensions, const kdsl_sycl_kernel_argument *arguments,
                                   size_t argument_count);
// An event that completes once everything submitted to the queue so far has (a barrier).
int kdsl_sycl_submit_marker(const kdsl_sycl_queue *queue, kdsl_sycl_event **event);

// An event of the queue holding a copy of a foreign `sycl::event` (such as dpctl's
// `SyclEvent.addressof_ref()`), so kdsl's submissions can wait for work submitted by others.
int kdsl_sycl_event_from_native(const kdsl_sycl_queue *queue, const void *sycl_event,
                                kdsl_sycl_event **event);
// The `sycl::event` inside an event, valid while the event lives (for dpctl to copy).
int kdsl_sycl_event_native(const kdsl_sycl_event *event, const void **sycl_event);

// The `sycl::kernel` inside a kernel, valid while the kernel lives (for dpctl to copy).
int kdsl_sycl_kernel_native(const kdsl_sycl_kernel *kernel, const void **sycl_kernel);
// A plain in-order `sycl::queue` on device `index` of `sycl::device::get_devices()`, made as a
// C++ SYCL program makes one (for tests of adopting foreign queues); freed with the next one.
int kdsl_sycl_new_native_queue(size_t index, void **sycl_queue);
void kdsl_sycl_delete_native_queue(void *sycl_queue);

void kdsl_sycl_destroy_event(kdsl_sycl_event *event);
int kdsl_sycl_event_wait(const kdsl_sycl_event *event);
int kdsl_sycl_event_is_complete(const kdsl_sycl_event *event, int *complete);
int kdsl_sycl_event_elapsed_ns(const kdsl_sycl_event *event, uint64_t *nanoseconds);

#ifdef __cplusplus
}  // extern "C"
#endif
