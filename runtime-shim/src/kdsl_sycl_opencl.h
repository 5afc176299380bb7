// Programs as OpenCL device binaries, for the on-disk native program cache: the binary of a
// program SYCL built on an OpenCL device, and a program made again from such a binary, which
// the driver loads without compiling SPIR-V. libOpenCL is opened at run time (the SYCL runtime's
// OpenCL adapter has usually loaded it already), so the shim links nothing new.
#pragma once

#include <sycl/sycl.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace kdsl_opencl {

// An OpenCL program (cl_program) owned by this object: released on destruction.
class NativeProgram {
 public:
  NativeProgram(void *program, sycl::context context);
  ~NativeProgram();
  NativeProgram(const NativeProgram &) = delete;
  NativeProgram &operator=(const NativeProgram &) = delete;

  // The kernel named `name` as a SYCL kernel (made once per name); throws when the program
  // has none.
  sycl::kernel kernel(const std::string &name) const;

 private:
  sycl::kernel make_kernel(const std::string &name) const;

  void *program_;
  sycl::context context_;
  mutable std::mutex kernels_mutex_;
  mutable std::map<std::string, sycl::kernel> kernels_;
};

// The device binary (CL_PROGRAM_BINARIES) of an executable bundle built for one OpenCL device;
// throws where the bundle is not on OpenCL or holds more than one program or device.
std::vector<std::uint8_t> program_binary(
    const sycl::kernel_bundle<sycl::bundle_state::executable> &bundle);

// A program made from `binary` (clCreateProgramWithBinary) and built for the queue's device;
// throws, with the driver's message, when the driver refuses the binary.
NativeProgram *program_from_binary(const sycl::context &context, const sycl::device &device,
                                   const std::uint8_t *binary, std::size_t size);

}  // namespace kdsl_opencl
