; Hand-written kernels for the runtime's tests until the kdsl compiler produces bundles.
; saxpy(y: global mut [f32], x: global [f32], a: f32, n: u32) and
; global_ids(output: global mut [u32], width: u32): output[id1 * width + id0] = id0 + 1000 * id1,
; which shows how the runtime maps kdsl dimensions onto the SPIR-V GlobalInvocationId components.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spirv64-unknown-unknown"

declare spir_func i64 @_Z13get_global_idj(i32)

define spir_kernel void @saxpy(ptr addrspace(1) noalias %y, ptr addrspace(1) noalias %x, float %a, i32 %n) {
entry:
  %id64 = call spir_func i64 @_Z13get_global_idj(i32 0)
  %id = trunc i64 %id64 to i32
  %inside = icmp ult i32 %id, %n
  br i1 %inside, label %body, label %exit
body:
  %index = zext i32 %id to i64
  %xp = getelementptr inbounds float, ptr addrspace(1) %x, i64 %index
  %yp = getelementptr inbounds float, ptr addrspace(1) %y, i64 %index
  %xv = load float, ptr addrspace(1) %xp, align 4
  %yv = load float, ptr addrspace(1) %yp, align 4
  %ax = fmul float %a, %xv
  %sum = fadd float %ax, %yv
  store float %sum, ptr addrspace(1) %yp, align 4
  br label %exit
exit:
  ret void
}

define spir_kernel void @global_ids(ptr addrspace(1) noalias %output, i32 %width) {
entry:
  %id0l = call spir_func i64 @_Z13get_global_idj(i32 0)
  %id1l = call spir_func i64 @_Z13get_global_idj(i32 1)
  %id0 = trunc i64 %id0l to i32
  %id1 = trunc i64 %id1l to i32
  %row = mul i32 %id1, %width
  %linear = add i32 %row, %id0
  %scaled = mul i32 %id1, 1000
  %value = add i32 %scaled, %id0
  %index = zext i32 %linear to i64
  %p = getelementptr inbounds i32, ptr addrspace(1) %output, i64 %index
  store i32 %value, ptr addrspace(1) %p, align 4
  ret void
}
