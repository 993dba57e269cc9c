// A small C++17 RAII wrapper over lockstep/harness.h: each handle owned by
// one object (freed in its destructor, movable, not copyable), and every
// failed call thrown as lockstep::Error with the library's message.
#ifndef LOCKSTEP_HPP
#define LOCKSTEP_HPP

#include <lockstep/harness.h>

#include <array>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace lockstep {

class Error : public std::runtime_error {
 public:
  Error(const std::string &call, lockstep_status status)
      : std::runtime_error(call + ": " + lockstep_status_name(status) + ": " + message()),
        status_(status) {}
  lockstep_status status() const { return status_; }

 private:
  static std::string message() {
    size_t n = 0;
    lockstep_thread_last_error(nullptr, 0, &n);
    std::string s(n + 1, '\0');
    if (lockstep_thread_last_error(s.data(), s.size(), &n) != LOCKSTEP_OK) return "?";
    s.resize(n);
    return s;
  }
  lockstep_status status_;
};

inline void check(lockstep_status s, const char *call) {
  if (s != LOCKSTEP_OK) throw Error(call, s);
}

struct Options {
  std::string autopilot;
  std::string log;  // empty: no log
  bool isolated = false;
};

// A whole simulated vehicle.
class Sim {
 public:
  Sim(const std::string &scenario, const Options &o) {
    lockstep_options opts{};
    opts.size = sizeof opts;
    opts.isolation = o.isolated ? LOCKSTEP_ISOLATION_PROCESS : LOCKSTEP_ISOLATION_IN_PROCESS;
    opts.autopilot_path = o.autopilot.c_str();
    opts.log_path = o.log.empty() ? nullptr : o.log.c_str();
    check(lockstep_sim_new_from_file(scenario.c_str(), &opts, &handle_), "lockstep_sim_new_from_file");
  }
  Sim(const Sim &) = delete;
  Sim &operator=(const Sim &) = delete;
  Sim(Sim &&o) noexcept : handle_(std::exchange(o.handle_, nullptr)) {}
  Sim &operator=(Sim &&o) noexcept {
    if (this != &o) {
      reset();
      handle_ = std::exchange(o.handle_, nullptr);
    }
    return *this;
  }
  ~Sim() { reset(); }

  // Steps up to n boundaries; how many were stepped.
  uint64_t step(uint64_t n) {
    uint64_t done = 0;
    check(lockstep_sim_step(handle_, n, &done), "lockstep_sim_step");
    return done;
  }
  void run_until(uint64_t t_us) { check(lockstep_sim_run_until(handle_, t_us), "lockstep_sim_run_until"); }
  uint64_t end_us() const {
    uint64_t t = 0;
    check(lockstep_sim_end_us(handle_, &t), "lockstep_sim_end_us");
    return t;
  }
  lockstep_truth truth() const {
    lockstep_truth t{};
    t.size = sizeof t;
    check(lockstep_sim_truth(handle_, &t), "lockstep_sim_truth");
    return t;
  }
  lockstep_actuators actuators() const {
    lockstep_actuators a{};
    a.size = sizeof a;
    check(lockstep_sim_actuators(handle_, &a), "lockstep_sim_actuators");
    return a;
  }
  void command(uint32_t c) { check(lockstep_sim_command(handle_, c), "lockstep_sim_command"); }
  void finish() { check(lockstep_sim_finish(handle_), "lockstep_sim_finish"); }

 private:
  void reset() {
    if (handle_ != nullptr) lockstep_sim_free(std::exchange(handle_, nullptr));
  }
  lockstep_sim *handle_ = nullptr;
};

}  // namespace lockstep

#endif
