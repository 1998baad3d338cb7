# Sourced on the GPU machine from the packed folder's parent (the repo
# root): the packed libraries first, then the machine's CUDA runtime,
# cuBLAS and NCCL (PyTorch's nvidia-* wheels, else /usr/local/cuda), Open
# MPI relocated (one rank, an MPI singleton without orted).
G=$(realpath "${G:-.gpu}")
cudalibs=$(for n in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libnccl.so.2; do
  find / -xdev \( -path /proc -o -path "$G" \) -prune -o -name "$n" -print 2>/dev/null | head -1; done |
  xargs -r -n1 dirname | sort -u | paste -sd:)
export LD_LIBRARY_PATH="$G/lib:$cudalibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OPAL_PREFIX="$G/ompi/usr" PMIX_INSTALL_PREFIX="$G/ompi/pmix2" PMIX_MCA_mca_base_component_path="$G/ompi/pmix2/lib/pmix"
export OMPI_MCA_ess_singleton_isolated=1 OMPI_MCA_mca_base_component_show_load_errors=0 OMPI_MCA_btl=self,vader
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PYTHONPATH="$G/python${PYTHONPATH:+:$PYTHONPATH}" POLLUX_AGENT_LIBRARY="$G/lib/libpollux-agent.so.0"
export PYTHONUNBUFFERED=1
