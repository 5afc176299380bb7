; ModuleID = 'stfc.ll'
source_filename = "kdsl"
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spirv64-unknown-unknown"

; Function Attrs: mustprogress nofree nosync nounwind willreturn memory(argmem: readwrite)
define spir_kernel void @stencil(ptr addrspace(1) noalias noundef writeonly align 4 captures(none) %output, i32 noundef %output.shape0, i32 noundef %output.shape1, i64 noundef %output.stride0, i64 noundef %output.stride1, ptr addrspace(1) noalias noundef readonly align 4 captures(none) %input, i32 noundef %input.shape0, i32 noundef %input.shape1, i64 noundef %input.stride0, i64 noundef %input.stride1) local_unnamed_addr #0 {
entry:
  %0 = tail call spir_func i64 @_Z13get_global_idj(i32 0), !range !0
  %1 = trunc nuw nsw i64 %0 to i32
  %2 = tail call spir_func i64 @_Z13get_global_idj(i32 1), !range !0
  %3 = trunc nuw nsw i64 %2 to i32
  %4 = icmp ugt i32 %input.shape1, %1
  %5 = icmp ugt i32 %input.shape0, %3
  %6 = select i1 %4, i1 %5, i1 false
  br i1 %6, label %then3, label %endif

endif.sink.split:                                 ; preds = %else13, %then3
  %.sink = phi float [ %19, %then3 ], [ %38, %else13 ]
  %.sink98 = mul nuw i64 %2, %output.stride0
  %7 = getelementptr float, ptr addrspace(1) %output, i64 %.sink98
  %8 = getelementptr float, ptr addrspace(1) %7, i64 %0
  store float %.sink, ptr addrspace(1) %8, align 4
  br label %endif

endif:                                            ; preds = %endif.sink.split, %entry
  ret void

then3:                                            ; preds = %entry
  %9 = icmp eq i64 %0, 0
  %10 = icmp eq i64 %2, 0
  %11 = select i1 %9, i1 true, i1 %10
  %12 = add i32 %input.shape1, -1
  %13 = icmp eq i32 %12, %1
  %or.cond = or i1 %13, %11
  %14 = add i32 %input.shape0, -1
  %15 = icmp eq i32 %14, %3
  %or.cond83 = select i1 %or.cond, i1 true, i1 %15
  %16 = mul nuw i64 %2, %input.stride0
  %17 = getelementptr float, ptr addrspace(1) %input, i64 %16
  %18 = getelementptr float, ptr addrspace(1) %17, i64 %0
  %19 = load float, ptr addrspace(1) %18, align 4
  br i1 %or.cond83, label %endif.sink.split, label %else13

else13:                                           ; preds = %then3
  %20 = getelementptr i8, ptr addrspace(1) %18, i64 -4
  %21 = load float, ptr addrspace(1) %20, align 4
  %22 = fadd contract float %19, %21
  %23 = getelementptr i8, ptr addrspace(1) %18, i64 4
  %24 = load float, ptr addrspace(1) %23, align 4
  %25 = fadd contract float %22, %24
  %26 = add nsw i64 %2, -1
  %27 = mul nuw i64 %26, %input.stride0
  %28 = getelementptr float, ptr addrspace(1) %input, i64 %27
  %29 = getelementptr float, ptr addrspace(1) %28, i64 %0
  %30 = load float, ptr addrspace(1) %29, align 4
  %31 = fadd contract float %25, %30
  %32 = add nuw nsw i64 %2, 1
  %33 = mul nuw i64 %32, %input.stride0
  %34 = getelementptr float, ptr addrspace(1) %input, i64 %33
  %35 = getelementptr float, ptr addrspace(1) %34, i64 %0
  %36 = load float, ptr addrspace(1) %35, align 4
  %37 = fadd contract float %31, %36
  %38 = fmul contract float %37, 0x3FC99999A0000000
  br label %endif.sink.split
}

; Function Attrs: mustprogress nofree nosync nounwind willreturn memory(none)
declare spir_func i64 @_Z13get_global_idj(i32) local_unnamed_addr #1

attributes #0 = { mustprogress nofree nosync nounwind willreturn memory(argmem: readwrite) }
attributes #1 = { mustprogress nofree nosync nounwind willreturn memory(none) }

!0 = !{i64 0, i64 2147483648}
