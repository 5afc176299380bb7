// See kdsl_spirv_validate.h.
#include "kdsl_spirv_validate.h"

#include <spirv-tools/libspirv.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

int fail(const std::string &why, char *message, std::size_t capacity) {
  if (capacity > 0) {
    std::size_t length = why.size() < capacity - 1 ? why.size() : capacity - 1;
    std::memcpy(message, why.data(), length);
    message[length] = '\0';
  }
  return 1;
}

}  // namespace

extern "C" int kdsl_spirv_validate(const std::uint8_t *spirv, std::size_t size, char *message,
                                   std::size_t capacity) {
  try {
    if (size % 4 != 0 || size < 20) {
      return fail(std::to_string(size) +
                      " bytes is not a whole SPIR-V module (a multiple of 4 bytes, at least the "
                      "20-byte header)",
                  message, capacity);
    }
    std::vector<std::uint32_t> words(size / 4);
    std::memcpy(words.data(), spirv, size);
    std::unique_ptr<spv_context_t, void (*)(spv_context)> context(
        spvContextCreate(SPV_ENV_UNIVERSAL_1_6), spvContextDestroy);
    if (!context) return fail("SPIRV-Tools could not create a context", message, capacity);
    spv_diagnostic diagnostic = nullptr;
    spv_result_t result =
        spvValidateBinary(context.get(), words.data(), words.size(), &diagnostic);
    std::string why;
    if (diagnostic != nullptr) {
      if (diagnostic->error != nullptr) why = diagnostic->error;
      spvDiagnosticDestroy(diagnostic);
    }
    if (result != SPV_SUCCESS) {
      return fail(why.empty() ? "the SPIR-V validator rejected the module" : why, message,
                  capacity);
    }
    return 0;
  } catch (const std::exception &error) {
    return fail(std::string("SPIR-V validation failed: ") + error.what(), message, capacity);
  } catch (...) {
    return fail("SPIR-V validation failed with an unknown C++ exception", message, capacity);
  }
}
