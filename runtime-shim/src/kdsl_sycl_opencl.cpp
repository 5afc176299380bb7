// See kdsl_sycl_opencl.h.

#include "kdsl_sycl_opencl.h"

#include <CL/cl.h>
#include <dlfcn.h>
#include <sycl/backend.hpp>
#include <sycl/backend/opencl.hpp>

#include <mutex>
#include <stdexcept>

namespace kdsl_opencl {
namespace {

// The OpenCL entry points used here, from the process's libOpenCL.
struct Functions {
  decltype(&clGetProgramInfo) get_program_info = nullptr;
  decltype(&clCreateProgramWithBinary) create_program_with_binary = nullptr;
  decltype(&clBuildProgram) build_program = nullptr;
  decltype(&clGetProgramBuildInfo) get_program_build_info = nullptr;
  decltype(&clCreateKernel) create_kernel = nullptr;
  decltype(&clReleaseKernel) release_kernel = nullptr;
  decltype(&clReleaseProgram) release_program = nullptr;
  decltype(&clReleaseContext) release_context = nullptr;
  decltype(&clReleaseDevice) release_device = nullptr;
};

template <typename Function>
void resolve(void *library, const char *name, Function &function) {
  function = reinterpret_cast<Function>(dlsym(library, name));
  if (function == nullptr) throw std::runtime_error(std::string("libOpenCL lacks ") + name);
}

const Functions &functions() {
  static Functions table;
  static std::string failure;
  static std::once_flag once;
  std::call_once(once, [] {
    void *library = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) library = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      failure = "libOpenCL could not be opened";
      return;
    }
    try {
      resolve(library, "clGetProgramInfo", table.get_program_info);
      resolve(library, "clCreateProgramWithBinary", table.create_program_with_binary);
      resolve(library, "clBuildProgram", table.build_program);
      resolve(library, "clGetProgramBuildInfo", table.get_program_build_info);
      resolve(library, "clCreateKernel", table.create_kernel);
      resolve(library, "clReleaseKernel", table.release_kernel);
      resolve(library, "clReleaseProgram", table.release_program);
      resolve(library, "clReleaseContext", table.release_context);
      resolve(library, "clReleaseDevice", table.release_device);
    } catch (const std::exception &error) {
      failure = error.what();
    }
  });
  if (!failure.empty()) throw std::runtime_error(failure);
  return table;
}

void check(cl_int status, const char *what) {
  if (status != CL_SUCCESS) {
    throw std::runtime_error(std::string(what) + " failed with OpenCL error " +
                             std::to_string(status));
  }
}

// The build log of `program` for `device`, or "" when there is none.
std::string build_log(const Functions &cl, cl_program program, cl_device_id device) {
  std::size_t size = 0;
  if (cl.get_program_build_info(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) !=
          CL_SUCCESS ||
      size == 0) {
    return "";
  }
  std::string log(size, '\0');
  cl.get_program_build_info(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  return log;
}

}  // namespace

NativeProgram::NativeProgram(void *program, sycl::context context)
    : program_(program), context_(std::move(context)) {}

NativeProgram::~NativeProgram() {
  try {
    functions().release_program(static_cast<cl_program>(program_));
  } catch (...) {
  }
}

sycl::kernel NativeProgram::kernel(const std::string &name) const {
  std::lock_guard<std::mutex> lock(kernels_mutex_);
  auto found = kernels_.find(name);
  if (found != kernels_.end()) return found->second;
  sycl::kernel made = make_kernel(name);
  kernels_.emplace(name, made);
  return made;
}

sycl::kernel NativeProgram::make_kernel(const std::string &name) const {
  const Functions &cl = functions();
  cl_int status = CL_SUCCESS;
  cl_kernel native = cl.create_kernel(static_cast<cl_program>(program_), name.c_str(), &status);
  if (status == CL_INVALID_KERNEL_NAME) {
    throw std::runtime_error("the kernel bundle has no kernel named `" + name + "`");
  }
  check(status, "clCreateKernel");
  try {
    // SYCL's OpenCL interop retains the kernel it wraps, so this reference is released here.
    sycl::kernel kernel = sycl::make_kernel<sycl::backend::opencl>(native, context_);
    cl.release_kernel(native);
    return kernel;
  } catch (...) {
    cl.release_kernel(native);
    throw;
  }
}

std::vector<std::uint8_t> program_binary(
    const sycl::kernel_bundle<sycl::bundle_state::executable> &bundle) {
  if (bundle.get_backend() != sycl::backend::opencl) {
    throw std::runtime_error("native program binaries are kept only for OpenCL devices");
  }
  const Functions &cl = functions();
  // get_native retains each program it returns.
  std::vector<cl_program> programs = sycl::get_native<sycl::backend::opencl>(bundle);
  struct Release {
    const Functions &cl;
    std::vector<cl_program> &programs;
    ~Release() {
      for (cl_program program : programs) cl.release_program(program);
    }
  } release{cl, programs};
  if (programs.size() != 1) {
    throw std::runtime_error("the kernel bundle holds " + std::to_string(programs.size()) +
                             " OpenCL programs, not one");
  }
  cl_uint devices = 0;
  check(cl.get_program_info(programs[0], CL_PROGRAM_NUM_DEVICES, sizeof devices, &devices,
                            nullptr),
        "clGetProgramInfo(CL_PROGRAM_NUM_DEVICES)");
  if (devices != 1) {
    throw std::runtime_error("the OpenCL program is built for " + std::to_string(devices) +
                             " devices, not one");
  }
  std::size_t size = 0;
  check(cl.get_program_info(programs[0], CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr),
        "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)");
  if (size == 0) throw std::runtime_error("the OpenCL driver gives no program binary");
  std::vector<std::uint8_t> binary(size);
  unsigned char *destination = binary.data();
  check(cl.get_program_info(programs[0], CL_PROGRAM_BINARIES, sizeof destination, &destination,
                            nullptr),
        "clGetProgramInfo(CL_PROGRAM_BINARIES)");
  return binary;
}

NativeProgram *program_from_binary(const sycl::context &context, const sycl::device &device,
                                   const std::uint8_t *binary, std::size_t size) {
  if (device.get_backend() != sycl::backend::opencl) {
    throw std::runtime_error("native program binaries are loaded only on OpenCL devices");
  }
  const Functions &cl = functions();
  // get_native retains the context and device it returns.
  cl_context native_context = sycl::get_native<sycl::backend::opencl>(context);
  cl_device_id native_device = sycl::get_native<sycl::backend::opencl>(device);
  struct Release {
    const Functions &cl;
    cl_context context;
    cl_device_id device;
    ~Release() {
      cl.release_device(device);
      cl.release_context(context);
    }
  } release{cl, native_context, native_device};
  cl_int binary_status = CL_SUCCESS;
  cl_int status = CL_SUCCESS;
  cl_program program = cl.create_program_with_binary(native_context, 1, &native_device, &size,
                                                     &binary, &binary_status, &status);
  check(status, "clCreateProgramWithBinary");
  auto owned = std::make_unique<NativeProgram>(program, context);
  check(binary_status, "clCreateProgramWithBinary (binary status)");
  status = cl.build_program(program, 1, &native_device, nullptr, nullptr, nullptr);
  if (status != CL_SUCCESS) {
    std::string log = build_log(cl, program, native_device);
    throw std::runtime_error("clBuildProgram of a program binary failed with OpenCL error " +
                             std::to_string(status) + (log.empty() ? "" : "\nbuild log:\n" + log));
  }
  return owned.release();
}

}  // namespace kdsl_opencl
