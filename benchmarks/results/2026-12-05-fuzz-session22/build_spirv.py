import sys, dpctl, dpctl.program as dp
q = dpctl.SyclQueue("opencl:cpu")
prog = dp.create_program_from_spirv(q, open(sys.argv[1],'rb').read(), "")
print("built", prog.has_sycl_kernel("fuzz"))
