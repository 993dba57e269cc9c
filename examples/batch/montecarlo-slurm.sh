#!/usr/bin/env bash
# A Monte Carlo batch of 10,000 runs as a Slurm job array of 50 shards,
# then one job that merges them (not run in CI). Submit from the
# repository (or anywhere the scenario's files are at the same paths on
# every node, e.g. a shared file system):
#
#   mkdir -p runs/mc    # Slurm writes the tasks' output there, and makes no directory
#   jobs=$(sbatch --parsable examples/batch/montecarlo-slurm.sh)
#   sbatch --dependency=afterok:$jobs --wrap \
#     'lockstep montecarlo merge runs/mc/shard-* --out runs/mc/merged'
#
# Each task flies shard K of 50 (K = SLURM_ARRAY_TASK_ID): the same draws
# as the whole batch, so the merge writes the runs.csv, summary.json and
# figures one machine would have. A task that fails can be submitted again
# alone (--array=K); the merge refuses missing or repeated shards.
#SBATCH --job-name=lockstep-mc
#SBATCH --array=1-50
#SBATCH --cpus-per-task=4
#SBATCH --time=01:00:00
#SBATCH --output=runs/mc/slurm-%A_%a.out
set -euo pipefail
shards=50
lockstep montecarlo examples/scenarios/montecarlo.toml \
  --runs 10000 --seed 7 \
  --shard "${SLURM_ARRAY_TASK_ID}/${shards}" \
  --jobs "${SLURM_CPUS_PER_TASK:-1}" \
  --out "runs/mc/shard-${SLURM_ARRAY_TASK_ID}" -q
