// C++17: several vehicles at once, one thread each, through the RAII
// wrapper in lockstep.hpp.
//
//   fleet SCENARIO AUTOPILOT N
//
// Flies N copies of SCENARIO in parallel to its end, then prints each final
// position with 17 digits and whether all N are bit-identical (the same
// scenario and seed give the same flight whatever the threads do), checks
// that a failed call throws with the library's message, and prints "ok".
#include "lockstep.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <thread>
#include <vector>

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s SCENARIO AUTOPILOT N\n", argv[0]);
    return 2;
  }
  const int n = std::atoi(argv[3]);
  lockstep::Options options;
  options.autopilot = argv[2];

  std::vector<lockstep::Sim> sims;
  for (int i = 0; i < n; i++) sims.emplace_back(argv[1], options);
  std::vector<lockstep_truth> ends(n);
  std::vector<std::exception_ptr> errors(n);
  std::vector<std::thread> threads;
  for (int i = 0; i < n; i++) {
    threads.emplace_back([&, i] {
      try {
        sims[i].run_until(sims[i].end_us());
        ends[i] = sims[i].truth();
        sims[i].finish();
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  }
  for (auto &t : threads) t.join();
  for (auto &e : errors) {
    if (e) std::rethrow_exception(e);
  }
  bool same = true;
  for (int i = 0; i < n; i++) {
    const auto &p = ends[i].position_ned_m;
    std::printf("vehicle %d end %llu position %.17g %.17g %.17g\n", i,
                static_cast<unsigned long long>(ends[i].time_us), p[0], p[1], p[2]);
    same = same && std::memcmp(&ends[i], &ends[0], sizeof ends[0]) == 0;
  }
  std::printf("identical %s\n", same ? "yes" : "no");

  try {
    sims[0].step(1);
    std::fprintf(stderr, "stepping a finished simulation did not throw\n");
    return 1;
  } catch (const lockstep::Error &e) {
    std::printf("threw %s\n", e.what());
    if (e.status() != LOCKSTEP_ERR_ENDED) return 1;
  }
  std::printf("ok\n");
  return same ? 0 : 1;
}
