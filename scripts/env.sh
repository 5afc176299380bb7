# Source this file (". scripts/env.sh") to get the environment kdsl's tools and tests use.
kdsl_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export KDSL_PREFIX=${KDSL_PREFIX:-$kdsl_root/.kdsl/prefix}
export LLVM_SYS_221_PREFIX=${LLVM_SYS_221_PREFIX:-/usr/lib/llvm-22}
# The wheel's OpenCL ICD file names a placeholder path, so name the CPU device's library directly.
export OCL_ICD_FILENAMES=${OCL_ICD_FILENAMES:-$KDSL_PREFIX/lib/libintelocl.so}
export LD_LIBRARY_PATH=$KDSL_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$kdsl_root/target/release:$KDSL_PREFIX/bin:/usr/lib/llvm-22/bin:$PATH
unset kdsl_root
