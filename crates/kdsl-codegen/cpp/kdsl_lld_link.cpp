// In-process lld (see kdsl_lld_link.h). lld::lldMain runs the driver inside its own
// llvm::CrashRecoveryContext, so lld's fatal errors return here, and it resets lld's global
// state afterwards, so the next link starts clean. Only the ELF driver is linked in.
#include "kdsl_lld_link.h"

#include <lld/Common/Driver.h>
#include <llvm/ADT/ArrayRef.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdlib>
#include <cstring>
#include <string>

LLD_HAS_DRIVER(elf)

// lld's ELF driver initializes every target LLVM was built with, for LTO, which kdsl never
// asks of it. These no-op initializers (for the targets build.rs lists) stand in for the real
// code generators, assembly printers and parsers, so the linker leaves those out of the binary,
// and neither their static constructors at start-up nor their initialization on each link cost
// anything. (Target infos and machine-code layers are linked for other reasons anyway.)
#define KDSL_UNUSED_TARGET(Name)                                                               \
  extern "C" void LLVMInitialize##Name##Target() {}                                            \
  extern "C" void LLVMInitialize##Name##AsmPrinter() {}                                        \
  extern "C" void LLVMInitialize##Name##AsmParser() {}
KDSL_TARGETS_LLD_NEED_NOT_INITIALIZE

extern "C" int kdsl_lld_link(const char *const *arguments, size_t count, char **diagnostics,
                             int *can_run_again) {
  std::string output_text;
  std::string error_text;
  llvm::raw_string_ostream output(output_text);
  llvm::raw_string_ostream errors(error_text);
  lld::Result result = lld::lldMain(llvm::ArrayRef<const char *>(arguments, count), output,
                                    errors, {{lld::Gnu, &lld::elf::link}});
  output.flush();
  errors.flush();
  *can_run_again = result.canRunAgain ? 1 : 0;
  *diagnostics = nullptr;
  if (!error_text.empty()) {
    char *copy = static_cast<char *>(std::malloc(error_text.size() + 1));
    if (copy != nullptr) {
      std::memcpy(copy, error_text.c_str(), error_text.size() + 1);
      *diagnostics = copy;
    }
  }
  return result.retCode;
}

extern "C" void kdsl_lld_free_message(char *message) { std::free(message); }
