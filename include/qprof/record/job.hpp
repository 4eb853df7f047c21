// SPDX-License-Identifier: Apache-2.0
// Where a run sits in a distributed job: host, rank, local rank, world size and job id, read from
// the launcher's environment (torchrun, OpenMPI, PMIx, PMI, Slurm), and the -o placeholders that
// give every rank a file of its own (job.%h.%r.dat).
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qprof/common/failure.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof::record {

struct JobIdentity {
  std::string host;  // --host-name, else $QPROF_HOSTNAME, else gethostname()
  trace::JobMeta job;
  std::vector<std::string> warnings;  // launcher variables that were set but unreadable
};

using EnvLookup = std::function<const char*(const char*)>;

// Reads the launcher's variables. Each field comes from the first source that sets it, in this
// order (the innermost launcher first: torchrun inside srun knows the worker's real rank):
//   rank        RANK, OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID
//   local rank  LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID
//   world size  WORLD_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS
//   job id      SLURM_JOB_ID, TORCHELASTIC_RUN_ID (not its default "none"), OMPI_MCA_ess_base_jobid
// The launcher named is the source of the rank (torchrun, openmpi, pmix, pmi, slurm).
JobIdentity detect_job(const EnvLookup& env, const std::string& host_override = {});
JobIdentity detect_job(const std::string& host_override = {});

// -o with placeholders: %h host, %r rank, %l local rank, %w world size, %p qprof's PID,
// %t start time (UTC, ms: 20261123T014713.123Z), %j job id, %% a percent sign. Values are made
// safe for a file name ('/' and control characters become '_'). A placeholder whose value is
// unknown, or an unknown one, is a failure.
Result<std::string> expand_output(std::string_view pattern, const JobIdentity& id, pid_t pid, Seconds start);

}  // namespace qprof::record
