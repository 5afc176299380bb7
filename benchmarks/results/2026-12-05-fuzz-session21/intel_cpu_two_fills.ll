target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spirv64-unknown-unknown"
define spir_kernel void @z(ptr addrspace(1) %out) {
entry:
  %a = alloca [5 x i8], align 16
  call void @llvm.memset.p0.i64(ptr align 16 %a, i8 0, i64 5, i1 false)
  call void @llvm.memset.p0.i64(ptr align 16 %a, i8 -1, i64 5, i1 false)
  %gid64 = call spir_func i64 @_Z13get_global_idj(i32 0)
  %m = urem i64 %gid64, 5
  %q = getelementptr inbounds i8, ptr %a, i64 %m
  %v = load i8, ptr %q, align 1
  %f = sitofp i8 %v to double
  %o = getelementptr inbounds double, ptr addrspace(1) %out, i64 %gid64
  store double %f, ptr addrspace(1) %o, align 8
  ret void
}
declare spir_func i64 @_Z13get_global_idj(i32)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
