target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spirv64-unknown-unknown"
define spir_kernel void @z(ptr addrspace(1) %out) {
entry:
  %a = alloca [3 x i16], align 16
  %gid64 = call spir_func i64 @_Z13get_global_idj(i32 0)
  %gid = trunc i64 %gid64 to i32
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %i64 = zext i32 %i to i64
  %p = getelementptr inbounds [3 x i16], ptr %a, i64 0, i64 %i64
  store i16 0, ptr %p, align 2
  %next = add i32 %i, 1
  %c = icmp ult i32 %next, 3
  br i1 %c, label %loop, label %done
done:
  %m = urem i32 %gid, 3
  %m64 = zext i32 %m to i64
  %q = getelementptr inbounds [3 x i16], ptr %a, i64 0, i64 %m64
  %v = load i16, ptr %q, align 2
  %f = uitofp i16 %v to double
  %o = getelementptr inbounds double, ptr addrspace(1) %out, i64 %gid64
  store double %f, ptr addrspace(1) %o, align 8
  ret void
}
declare spir_func i64 @_Z13get_global_idj(i32)
