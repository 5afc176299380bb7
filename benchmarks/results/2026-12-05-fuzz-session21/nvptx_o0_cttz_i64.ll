target datalayout = "e-p6:32:32-i64:64-i128:128-i256:256-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @fuzz_i64(i64 %0) {
entry:
  %1 = call i64 @llvm.cttz.i64(i64 %0, i1 false)
  %2 = icmp ule i64 2, %1
  br i1 %2, label %then1, label %else2

then1:                                            ; preds = %entry
  ret void

else2:                                            ; preds = %entry
  ret void
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare i64 @llvm.cttz.i64(i64, i1 immarg) #0

attributes #0 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
