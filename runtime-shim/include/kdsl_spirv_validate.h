// SPIR-V validation with SPIRV-Tools, shared by the compiler (which validates every image it
// emits) and the SYCL shim (which validates every image before a driver reads it).
#ifndef KDSL_SPIRV_VALIDATE_H
#define KDSL_SPIRV_VALIDATE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// 0 when `size` bytes at `spirv` are a valid SPIR-V module (universal 1.6 rules); otherwise 1,
// with the validator's message (or why the bytes are not a module) written to `message`
// (NUL-terminated, cut to `capacity` bytes). Never throws.
int kdsl_spirv_validate(const uint8_t *spirv, size_t size, char *message, size_t capacity);

#ifdef __cplusplus
}
#endif

#endif
