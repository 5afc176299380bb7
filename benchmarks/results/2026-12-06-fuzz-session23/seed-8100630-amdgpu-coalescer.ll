target datalayout = "e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

define amdgpu_kernel void @fuzz(i1 %0, double %1) {
entry:
  %a39 = alloca [3 x double], align 16, addrspace(5)
  br label %loop18

loop18:                                           ; preds = %endif23, %entry
  br i1 %0, label %then21, label %endif23

then21:                                           ; preds = %loop18
  %2 = fadd double %1, 0.000000e+00
  store double %2, ptr addrspace(5) %a39, align 8
  br label %loop32

endif23:                                          ; preds = %loop18
  store double 0.000000e+00, ptr addrspace(5) %a39, align 8
  br label %loop18

loop32:                                           ; preds = %loop32, %then21
  %3 = getelementptr i8, ptr addrspace(5) %a39, i32 16
  %4 = load double, ptr addrspace(5) %3, align 8
  %5 = fadd double %4, 0.000000e+00
  store double %5, ptr addrspace(5) %a39, align 8
  br label %loop32
}
