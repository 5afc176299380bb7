; ModuleID = 'h.ll'
source_filename = "kdsl"
target datalayout = "e-m:e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128:128:48-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

; Function Attrs: mustprogress nofree noinline norecurse nosync nounwind willreturn memory(argmem: write)
define fastcc void @kdsl.f22(i64 noundef range(i64 0, 4294967296) %p0, i8 noundef %pair.0) #0 {
entry:
  %a44 = alloca [2 x [5 x i16]], align 16, addrspace(5)
  %0 = getelementptr inbounds nuw i8, ptr addrspace(5) %a44, i32 10
  store <2 x i16> zeroinitializer, ptr addrspace(5) %0, align 2
  %1 = getelementptr inbounds nuw i8, ptr addrspace(5) %a44, i32 16
  store <2 x i16> zeroinitializer, ptr addrspace(5) %1, align 16
  %2 = trunc nuw i64 %p0 to i32
  %3 = and i32 %2, 1
  %4 = getelementptr inbounds nuw [5 x i16], ptr addrspace(5) %a44, i32 %3
  %5 = urem i32 %2, 5
  %6 = getelementptr inbounds nuw i16, ptr addrspace(5) %0, i32 %5
  %7 = getelementptr inbounds nuw i8, ptr addrspace(5) %a44, i32 14
  %8 = and i8 %pair.0, 15
  %9 = zext nneg i8 %8 to i16
  %10 = lshr i16 21595, %9
  %11 = add nuw nsw i16 %10, 6
  %12 = urem i16 %11, 9
  %13 = uitofp nneg i16 %12 to float
  %14 = bitcast float %13 to i32
  %15 = add nuw i32 %14, 32767
  %16 = lshr i32 %14, 16
  %17 = and i32 %16, 1
  %18 = add nuw i32 %15, %17
  %19 = lshr i32 %18, 16
  %20 = trunc nuw i32 %19 to i16
  store i16 %20, ptr addrspace(5) %7, align 2
  %21 = load i16, ptr addrspace(5) %6, align 2
  %22 = zext i16 %21 to i32
  %23 = shl nuw i32 %22, 16
  %24 = bitcast i32 %23 to float
  %25 = frem float %24, 2.000000e+00
  %26 = bitcast float %25 to i32
  %27 = lshr i32 %26, 16
  %28 = and i32 %27, 1
  %29 = add i32 %26, 32767
  %30 = add i32 %29, %28
  %31 = lshr i32 %30, 16
  %32 = or i32 %27, 64
  %33 = fcmp uno float %25, 0.000000e+00
  %34 = select i1 %33, i32 %32, i32 %31
  %35 = shl nuw i32 %34, 16
  %36 = bitcast i32 %35 to float
  %37 = fadd contract float %36, 0.000000e+00
  %38 = bitcast float %37 to i32
  %39 = lshr i32 %38, 16
  %40 = and i32 %39, 1
  %41 = add i32 %38, 32767
  %42 = add i32 %41, %40
  %43 = lshr i32 %42, 16
  %44 = or i32 %39, 64
  %45 = fcmp uno float %36, 0.000000e+00
  %46 = select i1 %45, i32 %44, i32 %43
  %47 = trunc nuw i32 %46 to i16
  store i16 %47, ptr addrspace(5) %4, align 2
  store <2 x i16> zeroinitializer, ptr addrspace(5) %0, align 2
  store <2 x i16> zeroinitializer, ptr addrspace(5) %1, align 16
  store i16 %20, ptr addrspace(5) %7, align 2
  %48 = load i16, ptr addrspace(5) %6, align 2
  %49 = zext i16 %48 to i32
  %50 = shl nuw i32 %49, 16
  %51 = bitcast i32 %50 to float
  %52 = frem float %51, 2.000000e+00
  %53 = bitcast float %52 to i32
  %54 = lshr i32 %53, 16
  %55 = and i32 %54, 1
  %56 = add i32 %53, 32767
  %57 = add i32 %56, %55
  %58 = lshr i32 %57, 16
  %59 = or i32 %54, 64
  %60 = fcmp uno float %52, 0.000000e+00
  %61 = select i1 %60, i32 %59, i32 %58
  %62 = shl nuw i32 %61, 16
  %63 = bitcast i32 %62 to float
  %64 = fadd contract float %63, 0.000000e+00
  %65 = bitcast float %64 to i32
  %66 = lshr i32 %65, 16
  %67 = and i32 %66, 1
  %68 = add i32 %65, 32767
  %69 = add i32 %68, %67
  %70 = lshr i32 %69, 16
  %71 = or i32 %66, 64
  %72 = fcmp uno float %63, 0.000000e+00
  %73 = select i1 %72, i32 %71, i32 %70
  %74 = trunc nuw i32 %73 to i16
  store i16 %74, ptr addrspace(5) %4, align 2
  ret void
}

; Function Attrs: nofree norecurse nosync nounwind memory(argmem: readwrite)
define amdgpu_kernel void @fuzz() #1 {
entry:
  %.not = icmp sgt i16 0, 0
  %0 = tail call i32 @llvm.amdgcn.workgroup.id.x()
  %1 = tail call ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()
  %2 = getelementptr inbounds nuw i8, ptr addrspace(4) %1, i64 4
  %3 = tail call i32 @llvm.amdgcn.workitem.id.x()
  %4 = tail call i32 @llvm.amdgcn.workgroup.id.y()
  %5 = tail call i32 @llvm.amdgcn.workitem.id.y()
  %6 = load <2 x i16>, ptr addrspace(4) %2, align 4
  %7 = zext <2 x i16> %6 to <2 x i32>
  %8 = insertelement <2 x i32> poison, i32 %0, i64 0
  %9 = insertelement <2 x i32> %8, i32 %4, i64 1
  %10 = mul nuw <2 x i32> %9, %7
  %11 = insertelement <2 x i32> poison, i32 %3, i64 0
  %12 = insertelement <2 x i32> %11, i32 %5, i64 1
  %13 = add nuw <2 x i32> %10, %12
  %14 = getelementptr inbounds nuw i8, ptr addrspace(4) %1, i64 12
  %15 = load i32, ptr addrspace(4) %14, align 4
  %16 = extractelement <2 x i32> %13, i64 1
  %17 = mul nuw i32 %16, %15
  %18 = extractelement <2 x i32> %13, i64 0
  %19 = add nuw i32 %18, %17
  %20 = mul nuw i64 0, 0
  %21 = add i64 %20, -3
  %22 = tail call i64 @llvm.umin.i64(i64 0, i64 %21)
  %23 = load i32, ptr addrspace(1) null, align 4
  %24 = tail call i32 @llvm.umax.i32(i32 %23, i32 1)
  %25 = urem i32 2103951906, %24
  %26 = or i32 0, 1
  %27 = udiv i32 %25, %26
  %28 = icmp ne i32 0, 0
  call fastcc void @kdsl.f22(i64 %22, i8 0)
  %.not33.not = icmp eq i8 0, 0
  ret void
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.amdgcn.workgroup.id.y() #2

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef nonnull align 4 ptr addrspace(4) @llvm.amdgcn.dispatch.ptr() #2

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef range(i32 0, 1024) i32 @llvm.amdgcn.workitem.id.y() #2

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef i32 @llvm.amdgcn.workgroup.id.x() #2

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare noundef range(i32 0, 1024) i32 @llvm.amdgcn.workitem.id.x() #2

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare i64 @llvm.umin.i64(i64, i64) #3

; Function Attrs: nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare i32 @llvm.umax.i32(i32, i32) #3

attributes #0 = { mustprogress nofree noinline norecurse nosync nounwind willreturn memory(argmem: write) "amdgpu-agpr-alloc"="0" "amdgpu-no-cluster-id-x" "amdgpu-no-cluster-id-y" "amdgpu-no-cluster-id-z" "amdgpu-no-completion-action" "amdgpu-no-default-queue" "amdgpu-no-dispatch-id" "amdgpu-no-dispatch-ptr" "amdgpu-no-flat-scratch-init" "amdgpu-no-heap-ptr" "amdgpu-no-hostcall-ptr" "amdgpu-no-implicitarg-ptr" "amdgpu-no-lds-kernel-id" "amdgpu-no-multigrid-sync-arg" "amdgpu-no-queue-ptr" "amdgpu-no-workgroup-id-x" "amdgpu-no-workgroup-id-y" "amdgpu-no-workgroup-id-z" "amdgpu-no-workitem-id-x" "amdgpu-no-workitem-id-y" "amdgpu-no-workitem-id-z" "uniform-work-group-size"="true" }
attributes #1 = { nofree norecurse nosync nounwind memory(argmem: readwrite) "amdgpu-agpr-alloc"="0" "amdgpu-no-cluster-id-x" "amdgpu-no-cluster-id-y" "amdgpu-no-cluster-id-z" "amdgpu-no-completion-action" "amdgpu-no-default-queue" "amdgpu-no-dispatch-id" "amdgpu-no-flat-scratch-init" "amdgpu-no-heap-ptr" "amdgpu-no-hostcall-ptr" "amdgpu-no-implicitarg-ptr" "amdgpu-no-lds-kernel-id" "amdgpu-no-multigrid-sync-arg" "amdgpu-no-queue-ptr" "amdgpu-no-workgroup-id-x" "amdgpu-no-workgroup-id-z" "amdgpu-no-workitem-id-x" "amdgpu-no-workitem-id-z" "uniform-work-group-size"="true" }
attributes #2 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #3 = { nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none) }
