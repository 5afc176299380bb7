// A stock SYCL program that loads kdsl SYCLBIN files with the sycl_ext_oneapi_syclbin API and
// launches their kernels, checking the results against host references. tests/syclbin.rs builds
// it (host-only C++17 against the prefix's headers and libsycl) and runs it.
//
// usage: load_syclbin BACKEND STATE SAXPY.syclbin REDUCTION.syclbin
//   BACKEND: opencl | ext_oneapi_cuda | ext_oneapi_hip | ext_oneapi_level_zero
//   STATE:   executable (get_kernel_bundle<executable>) | input (get_kernel_bundle<input> + build)
// Exit status: 0 all results correct, 1 a wrong result or a SYCL error, 2 bad usage,
// 77 no SYCL device of that backend (the caller skips).

#include <sycl/ext/oneapi/experimental/syclbin_kernel_bundle.hpp>
#include <sycl/sycl.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace syclex = sycl::ext::oneapi::experimental;

namespace {

std::vector<char> read_file(const char *path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    throw std::runtime_error(std::string("cannot open ") + path);
  }
  return std::vector<char>(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

std::string backend_name(sycl::backend backend) {
  switch (backend) {
  case sycl::backend::opencl:
    return "opencl";
  case sycl::backend::ext_oneapi_level_zero:
    return "ext_oneapi_level_zero";
  case sycl::backend::ext_oneapi_cuda:
    return "ext_oneapi_cuda";
  case sycl::backend::ext_oneapi_hip:
    return "ext_oneapi_hip";
  default:
    return "other";
  }
}

// The executable bundle of a SYCLBIN file, loaded in the given state.
sycl::kernel_bundle<sycl::bundle_state::executable>
load(const sycl::context &context, const sycl::device &device, std::vector<char> &bytes,
     const std::string &state) {
  sycl::span<char> span(bytes.data(), bytes.size());
  if (state == "input") {
    auto input =
        syclex::get_kernel_bundle<sycl::bundle_state::input>(context, {device}, span);
    return sycl::build(input);
  }
  return syclex::get_kernel_bundle<sycl::bundle_state::executable>(context, {device}, span);
}

bool run_saxpy(sycl::queue &queue, sycl::kernel_bundle<sycl::bundle_state::executable> &bundle) {
  const unsigned n = 100000;
  const float a = 2.5f;
  sycl::kernel kernel = bundle.ext_oneapi_get_kernel("saxpy");
  float *y = sycl::malloc_shared<float>(n, queue);
  float *x = sycl::malloc_shared<float>(n, queue);
  for (unsigned i = 0; i < n; ++i) {
    x[i] = 0.5f * static_cast<float>(i);
    y[i] = 1000.0f - static_cast<float>(i);
  }
  const size_t local = 256;
  const size_t global = (n + local - 1) / local * local;
  queue
      .submit([&](sycl::handler &handler) {
        handler.set_args(y, x, a, n);
        handler.parallel_for(sycl::nd_range<1>(global, local), kernel);
      })
      .wait_and_throw();
  unsigned wrong = 0;
  for (unsigned i = 0; i < n; ++i) {
    const float expected = a * (0.5f * static_cast<float>(i)) + (1000.0f - static_cast<float>(i));
    if (std::fabs(y[i] - expected) > 1e-5f * std::fabs(expected) + 1e-5f) {
      if (wrong++ < 5) {
        std::printf("saxpy: y[%u] = %g, expected %g\n", i, y[i], expected);
      }
    }
  }
  sycl::free(y, queue);
  sycl::free(x, queue);
  std::printf("saxpy: %u elements, %u wrong\n", n, wrong);
  return wrong == 0;
}

// examples/reduction.krn: one partial sum per work-group of 256, in local memory.
bool run_reduction(sycl::queue &queue,
                   sycl::kernel_bundle<sycl::bundle_state::executable> &bundle) {
  const unsigned n = 50000;
  const size_t local = 256;
  const size_t groups = (n + local - 1) / local;
  sycl::kernel kernel = bundle.ext_oneapi_get_kernel("reduce_sum");
  float *input = sycl::malloc_shared<float>(n, queue);
  float *partial = sycl::malloc_shared<float>(groups, queue);
  for (unsigned i = 0; i < n; ++i) {
    input[i] = static_cast<float>(i % 17) - 8.0f;
  }
  queue
      .submit([&](sycl::handler &handler) {
        handler.set_args(partial, input, n);
        handler.parallel_for(sycl::nd_range<1>(groups * local, local), kernel);
      })
      .wait_and_throw();
  unsigned wrong = 0;
  for (size_t group = 0; group < groups; ++group) {
    double expected = 0.0;
    for (size_t i = group * local; i < (group + 1) * local && i < n; ++i) {
      expected += input[i];
    }
    if (std::fabs(partial[group] - expected) > 1e-3) {
      if (wrong++ < 5) {
        std::printf("reduce_sum: group %zu = %g, expected %g\n", group, partial[group], expected);
      }
    }
  }
  sycl::free(input, queue);
  sycl::free(partial, queue);
  std::printf("reduce_sum: %zu groups, %u wrong\n", groups, wrong);
  return wrong == 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s BACKEND STATE SAXPY.syclbin REDUCTION.syclbin\n", argv[0]);
    return 2;
  }
  const std::string wanted_backend = argv[1];
  const std::string state = argv[2];
  try {
    std::vector<sycl::device> devices;
    for (const sycl::device &device : sycl::device::get_devices()) {
      if (backend_name(device.get_backend()) == wanted_backend) {
        devices.push_back(device);
      }
    }
    if (devices.empty()) {
      std::printf("no SYCL device of backend %s\n", wanted_backend.c_str());
      return 77;
    }
    std::vector<char> saxpy_file = read_file(argv[3]);
    std::vector<char> reduction_file = read_file(argv[4]);
    bool correct = true;
    for (const sycl::device &device : devices) {
      std::printf("device: %s (%s)\n", device.get_info<sycl::info::device::name>().c_str(),
                  wanted_backend.c_str());
      sycl::queue queue(device);
      sycl::context context = queue.get_context();
      auto saxpy = load(context, device, saxpy_file, state);
      correct = run_saxpy(queue, saxpy) && correct;
      auto reduction = load(context, device, reduction_file, state);
      correct = run_reduction(queue, reduction) && correct;
    }
    return correct ? 0 : 1;
  } catch (const std::exception &error) {
    std::printf("error: %s\n", error.what());
    return 1;
  }
}
