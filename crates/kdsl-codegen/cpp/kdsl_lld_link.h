// Links an AMDGPU object into an HSA code object with LLVM 22's lld, in this process (lld's
// ELF driver, from Debian's liblld-22-dev). Used by kdsl-codegen; see
// runtime-shim/src/kdsl_lld_link.cpp.
#ifndef KDSL_LLD_LINK_H
#define KDSL_LLD_LINK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// Runs `ld.lld arguments...` (arguments[0] is the program name). Returns lld's exit code (0
// when it linked). `diagnostics` receives what lld wrote to its standard error (freed with
// kdsl_lld_free_message; NULL when empty). `can_run_again` is 0 when lld crashed or could not
// reset its state: then no further in-process link may run in this process.
// Not thread-safe: the caller serialises calls.
int kdsl_lld_link(const char *const *arguments, size_t count, char **diagnostics,
                  int *can_run_again);

void kdsl_lld_free_message(char *message);

#ifdef __cplusplus
}
#endif

#endif
