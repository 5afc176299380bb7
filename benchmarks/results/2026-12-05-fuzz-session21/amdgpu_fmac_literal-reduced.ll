target datalayout = "e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @fuzz(double %0) {
entry:
  store double 0.000000e+00, ptr addrspace(5) null, align 8
  %1 = load double, ptr addrspace(5) null, align 8
  %2 = frem double %0, 0.000000e+00
  %3 = call double @llvm.fma.f64(double %1, double 1.100000e+01, double 0x7FF8000000000000)
  %4 = frem double %3, 0.000000e+00
  ret void
}

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare double @llvm.fma.f64(double, double, double) #0

attributes #0 = { nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none) }
