// Communicator over MPI (see pollux/agent_mpi.h).
#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "pollux/agent_mpi.h"

namespace pollux {
namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw std::runtime_error(std::string(what) + ": " + std::string(msg, len));
}

MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case DType::kFloat32: return MPI_FLOAT;
    case DType::kFloat64: return MPI_DOUBLE;
    default: break;
  }
  throw std::invalid_argument("MPI all-reduce of host gradients supports float32 and float64");
}

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(MPI_Comm parent) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) throw std::runtime_error("the MPI agent needs MPI_Init to have been called");
    check(MPI_Comm_dup(parent, &comm_), "MPI_Comm_dup");
    // Errors come back as codes (turned into exceptions), not aborts.
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    nodes_ = count_nodes();
  }
  ~MpiCommunicator() override {
    if (in_flight_) MPI_Wait(&request_, MPI_STATUS_IGNORE);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int nodes() const override { return nodes_; }
  int fortran_handle() const override { return static_cast<int>(MPI_Comm_c2f(comm_)); }

  void start_allreduce(double* v, int n) override {
    if (in_flight_) throw std::logic_error("start_allreduce: one is already in flight");
    check(MPI_Iallreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, comm_, &request_), "MPI_Iallreduce");
    in_flight_ = true;
  }
  void wait_allreduce() override {
    if (!in_flight_) return;
    in_flight_ = false;
    check(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait");
  }
  void allreduce_sum(void* data, std::size_t count, DType t) override {
    // MPI counts are int: large buffers go in chunks.
    const std::size_t chunk = 1u << 30;
    char* p = static_cast<char*>(data);
    const std::size_t elem = dtype_size(t);
    for (std::size_t done = 0; done < count; done += chunk) {
      const int n = static_cast<int>(std::min(chunk, count - done));
      check(MPI_Allreduce(MPI_IN_PLACE, p + done * elem, n, mpi_type(t), MPI_SUM, comm_), "MPI_Allreduce");
    }
  }
  void broadcast(std::string& data, int root) override {
    unsigned long long len = data.size();
    check(MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, root, comm_), "MPI_Bcast");
    data.resize(len);
    if (len > 0) check(MPI_Bcast(data.data(), static_cast<int>(len), MPI_CHAR, root, comm_), "MPI_Bcast");
  }
  void barrier() override { check(MPI_Barrier(comm_), "MPI_Barrier"); }

 private:
  int count_nodes() {
    // Slurm's node name tells emulated nodes on one host apart.
    const std::string name = JobEnvironment::from_environment().node_name;
    constexpr int kLen = 256;
    std::vector<char> mine(kLen, '\0'), all(static_cast<std::size_t>(kLen) * size_);
    name.copy(mine.data(), kLen - 1);
    check(MPI_Allgather(mine.data(), kLen, MPI_CHAR, all.data(), kLen, MPI_CHAR, comm_), "MPI_Allgather");
    std::set<std::string> names;
    for (int r = 0; r < size_; ++r) names.emplace(all.data() + static_cast<std::size_t>(r) * kLen);
    return static_cast<int>(names.size());
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Request request_ = MPI_REQUEST_NULL;
  bool in_flight_ = false;
  int rank_ = 0, size_ = 1, nodes_ = 1;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator(MPI_Comm comm) {
  return std::make_unique<MpiCommunicator>(comm);
}

std::unique_ptr<Agent> make_mpi_agent(MPI_Comm comm, AgentOptions options) {
  auto c = make_mpi_communicator(comm);
  return std::make_unique<Agent>(std::move(c), make_cpu_backend(), std::move(options),
                                 JobEnvironment::from_environment());
}

}  // namespace pollux
