; The same two kernels as handmade_spirv.ll for NVPTX.
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.y()

define ptx_kernel void @saxpy(ptr addrspace(1) noalias %y, ptr addrspace(1) noalias %x, float %a, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %ctaid, %ntid
  %id = add i32 %base, %tid
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

define ptx_kernel void @global_ids(ptr addrspace(1) noalias %output, i32 %width) {
entry:
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %nx = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %by = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %ny = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %b0 = mul i32 %bx, %nx
  %id0 = add i32 %b0, %tx
  %b1 = mul i32 %by, %ny
  %id1 = add i32 %b1, %ty
  %row = mul i32 %id1, %width
  %linear = add i32 %row, %id0
  %scaled = mul i32 %id1, 1000
  %value = add i32 %scaled, %id0
  %index = zext i32 %linear to i64
  %p = getelementptr inbounds i32, ptr addrspace(1) %output, i64 %index
  store i32 %value, ptr addrspace(1) %p, align 4
  ret void
}
