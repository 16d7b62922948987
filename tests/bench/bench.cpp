// SPDX-License-Identifier: Apache-2.0
// vfready's benchmarks on the fake host: time-to-ready against the seed's procedure and
// the hardware's critical path, scale, steady state, repair latency. Every figure is
// measured in this run; ratios hold where absolute times drift on shared machines.
// Usage (root): vfready_bench [--json FILE] [--quick] [--only GROUP]
#include <dirent.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>
#include <utility>

#include "daemon_run.hpp"
#include "hand_off.hpp"
#include "measure.hpp"
#include "notify_socket.hpp"
#include "private_bus.hpp"
#include "service_daemon.hpp"
#include "udev_done.hpp"
#include "vfready/bus/bus.hpp"
#include "vfready/host/links.hpp"

using namespace vfready::testing;
using namespace vfready::bench;
using std::chrono::duration;

namespace {

constexpr uint32_t kReferenceProbeMs = 50;  // time-to-ready, as the issue's reference
constexpr uint32_t kScaleProbeMs = 20;      // scale and steady state: the topology's own
constexpr uint32_t kFastProbeMs = 5;        // scale where the bring-up is CPU-bound

double ms_between(Clock::time_point a, Clock::time_point b) {
  return duration<double, std::milli>(b - a).count();
}

// The PF addresses of the reference host's InfiniBand HCAs.
std::vector<std::string> ib_pfs(TopologyBuilder t) {
  std::vector<std::string> out;
  for (const auto& f : t.json()["functions"]) {
    if (f.contains("infiniband") && f["infiniband"]["ports"][0]["link_layer"] == "InfiniBand" &&
        f.contains("sriov")) {
      out.push_back(f["pci"]);
    }
  }
  return out;
}

// VF `v` of a PF with offset 1, stride 1, on function 0 of its bus.
std::string vf_pci(const std::string& pf, int v) {
  const int id = v + 1;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s:%02x.%d", pf.substr(0, 7).c_str(), id / 8, id % 8);
  return buf;
}

// vfready as systemd runs it, from its exec to READY=1; then SIGTERM, and its
// rusage (CPU time, peak RSS) from wait4. (--once would add the status table it prints,
// megabytes of JSON at 2,032 VFs, which the service never builds.)
struct Run {
  double ready_ms = -1;  // from vfreadyd's exec (the fake host's exec wrapper stamps it)
  // The test rig's part before that exec: bash, and the wrapper entering the fake host's
  // namespaces (a node's systemd does the like before it starts the service).
  double rig_ms = -1;
  double cpu_ms = 0;
  double user_cpu_ms = 0;
  double rss_mib = 0;
  // The most threads vfreadyd had at once until READY=1, /proc/PID/task looked at every
  // 10 ms (a thread that lives less than that may go unseen).
  double peak_threads = 0;
  int exit_code = -1;
  pid_t pid = -1;
  // What vfreadyd says it asked of the kernel from start to exit ("sysfs reads" -> N),
  // and the FUSE requests the fake host served meanwhile, by kind.
  std::map<std::string, double> calls;
  std::map<std::string, double> fuse;
};

// How many threads process `pid` has now (0 once it is gone).
double threads_of(pid_t pid) {
  double n = 0;
  if (DIR* dir = opendir(("/proc/" + std::to_string(pid) + "/task").c_str())) {
    while (const dirent* e = readdir(dir)) {
      n += e->d_name[0] == '.' ? 0 : 1;
    }
    closedir(dir);
  }
  return n;
}

// With `under` (a tool that runs vfreadyd in its process: valgrind), vfreadyd is started
// under it and given `bound` to READY.
Run run_vfready(const FakeHost& host, const std::string& config, const std::string& under = "",
                std::chrono::minutes bound = std::chrono::minutes(3)) {
  const auto fuse_before = host.fuse_requests();
  NotifySocket notify;
  auto command = vfreadyd_command(host, config, "--no-bus");
  if (!under.empty()) {
    command.insert(command.find(VFREADYD_PATH), under + " ");
  }
  const auto stamp = host.root() + "/vfreadyd.exec";
  command.replace(command.find(on_host(host)), on_host(host).size(), on_host(host, stamp));
  Launched daemon("NOTIFY_SOCKET=" + notify.path() + " exec " + command + " >/dev/null 2>" +
                  host.root() + "/vfreadyd.log");
  Run r;
  // READY, or the daemon's exit without it.
  while (!notify.wait_for("READY=1", std::chrono::milliseconds(10)) &&
         !daemon.wait(std::chrono::milliseconds(0)) && Clock::now() - daemon.started() < bound) {
    r.peak_threads = std::max(r.peak_threads, threads_of(daemon.pid()));
  }
  const auto ready = notify.arrival_of("READY=1");
  int64_t exec_ns = 0;
  if (ready && std::ifstream(stamp) >> exec_ns) {
    const Clock::time_point exec{std::chrono::nanoseconds(exec_ns)};  // CLOCK_MONOTONIC
    r.ready_ms = ms_between(exec, *ready);
    r.rig_ms = ms_between(daemon.started(), exec);
    kill(daemon.pid(), SIGTERM);
  } else if (ready) {
    std::cerr << "vfready_bench: READY=1, but no time of vfreadyd's exec in " << stamp << "\n";
    kill(daemon.pid(), SIGTERM);
  } else {
    std::cerr << "vfready_bench: no READY=1:\n" << read_file(host.root() + "/vfreadyd.log");
  }
  daemon.wait(std::chrono::minutes(1));
  r.cpu_ms = daemon.cpu_ms();
  r.user_cpu_ms = daemon.user_cpu_ms();
  r.rss_mib = daemon.max_rss_mib();
  r.exit_code = daemon.exit_code();
  r.pid = daemon.pid();
  for (const auto& [name, n] :
       logged_kernel_calls(read_file(host.root() + "/vfreadyd.log"), "since start")) {
    r.calls[name] = static_cast<double>(n);
  }
  for (const auto& [kind, n] : host.fuse_requests()) {
    const auto before = fuse_before.find(kind);
    r.fuse[kind] = static_cast<double>(n - (before == fuse_before.end() ? 0 : before->second));
  }
  return r;
}

// The seed's oneshot unit, as a shell script on the same kind of host: per PF a
// sriov_numvfs write and sleep 0.5, a wait for udev's queue, the GUID writes, and the
// unbind/bind per VF that makes them effective.
double run_seed(const FakeHost& host, const std::vector<std::string>& pfs, int vfs) {
  std::ostringstream s;
  const auto sys = host.root() + "/sys/bus/pci";
  s << "set -e\n";
  for (const auto& pf : pfs) {
    s << "echo " << vfs << " > " << sys << "/devices/" << pf << "/sriov_numvfs; sleep 0.5\n";
  }
  s << "while [ -e " << host.root() << "/run/udev/queue ]; do sleep 0.1; done\n";
  int n = 0;
  for (const auto& pf : pfs) {
    for (int v = 0; v < vfs; ++v, ++n) {
      char guid[32];
      std::snprintf(guid, sizeof guid, "02:00:00:00:00:00:%02x:%02x", n / 256, n % 256);
      const auto dir = sys + "/devices/" + pf + "/sriov/" + std::to_string(v);
      s << "echo " << guid << " > " << dir << "/node; echo " << guid << " > " << dir
        << "/port; echo Follow > " << dir << "/policy\n";
      s << "echo " << vf_pci(pf, v) << " > " << sys << "/drivers/mlx5_core/unbind\n";
      s << "echo " << vf_pci(pf, v) << " > " << sys << "/drivers/mlx5_core/bind\n";
    }
  }
  const auto script = host.root() + "/seed.sh";
  std::ofstream(script) << s.str();
  const auto start = Clock::now();
  const auto r = sh("bash " + script, std::chrono::minutes(5));
  if (r.exit_code != 0) {
    std::cerr << "seed procedure failed: " << r.err << "\n";
    return -1;
  }
  return ms_between(start, Clock::now());
}

// What the fake host itself needs for a bring-up: every PF at once, its VFs created with
// autoprobe off, autoprobe back on (which probes none of them), then each VF probed in
// turn through drivers_probe (as vfready writes: O_WRONLY), with no GUIDs, udev or names.
// With `renames`, each VF's netdev is renamed too, by ifindex (read from the VF's net/
// entry: udev may rename the driver's ib<N> meanwhile), on a thread of the PF's own that
// takes its VFs in probe order:
// - kBesideProbes: each as its probe returns, to a name of the floor's own. udev has not
//   handled most netdevs yet and keeps the name it finds (NamePolicy=keep): about one
//   rename a VF.
// - kAfterUdev: each once udev is done with it (its database file is in place), to its
//   name in the scale configuration: the bring-up's order (udev settles, then vfready
//   names), where udev renames each VF first (the kernel's ib<N> to its predictable
//   name), as under vfready: two renames a VF.
// Wall time from the first write to the last probe's (or rename's) end; -1 when a write or
// a rename failed.
// The ifindex of the netdev in a device's net/ directory, 0 for none. Asked again
// when a rename moves the entry between the listing and the read.
int netdev_ifindex(const std::string& net_dir) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(net_dir, ec)) {
      std::ifstream in(e.path() / "ifindex");
      int ifindex = 0;
      if (in >> ifindex) {
        return ifindex;
      }
    }
  }
  return 0;
}

enum class FloorRenames {
  kNone,
  kBesideProbes,  // each VF as its probe returns, to a name of the floor's own
  kAfterUdev,     // each VF once udev is done with it, to its name in the scale config
};

double probe_floor(const FakeHost& host, const TopologyBuilder& topology, int vfs,
                   FloorRenames renames = FloorRenames::kNone) {
  const bool renamed = renames != FloorRenames::kNone;
  std::optional<vfready::testing::UdevDone> udev_done;
  if (renames == FloorRenames::kAfterUdev) {
    udev_done.emplace(host.root() + "/run/udev/data");
    if (!udev_done->watching()) {
      return -1;
    }
  }
  const auto pfs = ib_pfs(topology);
  const auto sys = host.root() + "/sys/bus/pci/";
  const auto write = [](const std::string& path, const std::string& value) {
    const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
      return false;
    }
    const bool ok = ::write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
    close(fd);
    return ok;
  };
  // The VFs probed and not renamed yet, a queue per PF, closed when its probes are over.
  std::vector<vfready::testing::HandOff<int>> probed(pfs.size());
  std::atomic<bool> ok{true};
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (std::size_t p = 0; p < pfs.size() && renamed; ++p) {
    threads.emplace_back([&, p] {  // this thread only, into the fake host's namespace
      const int fd = open(("/run/netns/" + host.netns()).c_str(), O_RDONLY | O_CLOEXEC);
      const bool in = fd >= 0 && setns(fd, CLONE_NEWNET) == 0;
      if (fd >= 0) {
        close(fd);
      }
      std::optional<vfready::host::NetlinkLinks> links;
      try {
        if (in) {
          links.emplace();
        }
      } catch (const std::exception&) {
        links.reset();  // every rename fails: so does the run
      }
      const auto dir = sys + "devices/" + pfs[p] + "/virtfn";
      while (const auto v = probed[p].pop()) {
        const auto vf = std::to_string(*v);
        const int ifindex = links ? netdev_ifindex(dir + vf + "/net") : 0;
        const bool after_udev = udev_done.has_value();
        // Once one failed, the run has failed: the rest are not waited for.
        if (!ok || ifindex <= 0 ||
            (after_udev && !udev_done->wait(ifindex, std::chrono::seconds(30))) ||
            links->rename(ifindex, (after_udev ? "ibs" : "fl") + std::to_string(p) + "v" + vf) !=
                0) {
          ok = false;
        }
      }
    });
  }
  for (std::size_t p = 0; p < pfs.size(); ++p) {
    threads.emplace_back([&, p] {
      const auto dir = sys + "devices/" + pfs[p] + "/";
      bool good = write(dir + "sriov_drivers_autoprobe", "0") &&
                  write(dir + "sriov_numvfs", std::to_string(vfs)) &&
                  write(dir + "sriov_drivers_autoprobe", "1");
      for (int v = 0; good && v < vfs; ++v) {
        std::error_code ec;
        const auto vf = std::filesystem::read_symlink(dir + "virtfn" + std::to_string(v), ec);
        good = !ec && write(sys + "drivers_probe", vf.filename().string());
        if (good) {
          probed[p].push(v);
        }
      }
      probed[p].close();
      if (!good) {
        ok = false;
      }
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  const double took = ms_between(start, Clock::now());
  if (!ok) {
    std::cerr << "vfready_bench: the fake host's floor run failed a write or a rename\n";
  }
  return ok ? took : -1;
}

// Before each measured run: the CPUs quiet (the run before tears its namespace down in
// the background), so that runs compared with each other start alike.
void quiet_cpus() {
  if (!wait_for_quiet_cpus(std::chrono::seconds(10))) {
    std::cerr << "vfready_bench: the CPUs were not quiet within 10 s; measuring anyway\n";
  }
}

// `value` with `digits` decimals.
std::string fixed(double value, int digits) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(digits);
  o << value;
  return o.str();
}

// The median of measurements of which none may fail: -1 (no measurement) when one did.
double median_of(std::vector<double> v) {
  return std::any_of(v.begin(), v.end(), [](double x) { return x < 0; }) ? -1 : percentile(v, 50);
}

// On `topology` (8 VFs a PF), vfready with the repository's configuration and then the
// fake host's floor, each on a fake host of its own, each from quiet CPUs.
std::pair<Run, double> vfready_and_floor(const TopologyBuilder& topology) {
  Run run;
  {
    FakeHost host(topology);
    quiet_cpus();
    run = run_vfready(host, repo_config());
  }
  FakeHost host(topology);
  quiet_cpus();
  return {run, probe_floor(host, topology, 8)};
}

void time_to_ready(std::vector<Figure>& out) {
  const auto topology = TopologyBuilder::reference().probe_ms(kReferenceProbeMs);
  const auto pfs = ib_pfs(topology);
  // vfready and the floor take turns three times, as at scale: one pair moves by a
  // dozen milliseconds with the machine, more than the target's margin. The figures are
  // the medians; "vfready - floor" is the median of the pairs' differences.
  constexpr int kPairs = 3;
  std::vector<double> readies;
  std::vector<double> floors;
  std::vector<double> over;  // each pair's vfready - floor (-1 ms: none measured)
  std::vector<double> rigs;
  for (int pair = 0; pair < kPairs; ++pair) {
    const auto [run, floor] = vfready_and_floor(topology);
    rigs.push_back(run.rig_ms);
    std::cerr << "vfready_bench:   vfready " << run.ready_ms << " ms, floor " << floor << " ms\n";
    const bool measured = run.ready_ms >= 0 && run.exit_code == 0 && floor > 0;
    readies.push_back(measured ? run.ready_ms : -1);
    floors.push_back(measured ? floor : -1);
    over.push_back(measured ? run.ready_ms - floor : -1);
  }
  const double ready = median_of(readies);
  const double floor = median_of(floors);
  const double above = ready < 0 ? -1 : median_of(over);
  std::string pairs;
  for (const double d : over) {
    pairs += (pairs.empty() ? "" : ", ") + fixed(d, 1);
  }
  double seed = 0;
  {
    FakeHost host(topology);
    quiet_cpus();
    seed = run_seed(host, pfs, 8);
  }
  std::cerr << "vfready_bench:   seed " << seed << " ms\n";
  const double critical = 8.0 * kReferenceProbeMs;
  const char* s = "time-to-ready, DGX H200 (8 PFs x 8 VFs, vf_probe_ms 50)";
  out.push_back({s, "critical path (slowest PF: 8 VFs x 50 ms)", critical, "ms", {}, ""});
  out.push_back({s, "vfready: exec to READY=1, median of 3", ready, "ms", {}, ""});
  out.push_back({s,
                 "  not counted: the test rig before vfreadyd's exec, median",
                 median_of(rigs),
                 "ms",
                 {},
                 ""});
  out.push_back({s, "seed procedure (shell, sleep 0.5 per PF)", seed, "ms", {}, ""});
  out.push_back({s, "vfready / critical path", ready / critical, "x", {}, ""});
  out.push_back({s, "fake host's floor (numvfs + probes only), median of 3", floor, "ms", {}, ""});
  out.push_back({s, "vfready / fake host's floor", ready / floor, "x", 1.03, "1.03"});
  out.push_back({s, "vfready - fake host's floor, median of 3 pairs", above, "ms", 25,
                 "25 ms (pairs: " + pairs + ")"});
  out.push_back({s, "vfready / seed (at most 0.1: 10x faster)", ready / seed, "x", 0.1,
                 "10x faster than the seed"});

  // The same host on a kernel that runs sriov_numvfs writes of all PFs one at a time
  // (pci_lock_rescan_remove() around sriov_configure), vfready and the floor alike.
  auto serialized = topology;
  serialized.json()["kernel"]["serializes_sriov_configure"] = true;
  const auto [vfready_serialized, floor_serialized] = vfready_and_floor(serialized);
  const char* z =
      "time-to-ready, sriov_numvfs serialized across PFs (kernel.serializes_sriov_configure)";
  out.push_back({z, "vfready: exec to READY=1", vfready_serialized.ready_ms, "ms", {}, ""});
  out.push_back({z, "fake host's floor (numvfs + probes only)", floor_serialized, "ms", {}, ""});
  out.push_back({z,
                 "vfready / fake host's floor",
                 vfready_serialized.ready_ms / floor_serialized,
                 "x",
                 {},
                 ""});
  out.push_back(
      {z, "vfready serialized / vfready not", vfready_serialized.ready_ms / ready, "x", {}, ""});
}

// 16 PFs with `vfs` VFs each, on buses 0x10, 0x20, ...: topology and config.
std::pair<TopologyBuilder, std::string> scaled(int vfs, uint32_t probe_ms) {
  auto t = TopologyBuilder::reference();
  auto base = t.function("0000:18:00.0");
  auto& json = t.json();
  json["functions"] = nlohmann::json::array();
  std::string select;
  for (int p = 0; p < 16; ++p) {
    const int bus = 0x10 + 0x08 * p;  // one bus each: 127 VFs fill devices 0..15
    char pci[16];
    std::snprintf(pci, sizeof pci, "0000:%02x:00.0", bus);
    auto f = base;
    f["pci"] = pci;
    f["netdev"] = "ibp" + std::to_string(bus) + "s0";
    f["sriov"]["totalvfs"] = 127;
    f["sriov"]["vf_probe_ms"] = probe_ms;
    f["infiniband"]["name"] = "mlx5_" + std::to_string(p);
    char guid[32];
    std::snprintf(guid, sizeof guid, "a088:c203:00%02x:1000", p);
    f["infiniband"]["node_guid"] = guid;
    json["functions"].push_back(f);
    select += (select.empty() ? "\"" : ", \"") + std::string(pci) + "\"";
  }
  const auto config = R"({"pfs": [{"select": {"pci": [)" + select + R"(]}, "vfs": )" +
                      std::to_string(vfs) +
                      R"(, "link_layer": "InfiniBand", "pf_name": "ibs{pf_index}",
      "vf_name": "ibs{pf_index}v{vf}", "mtu": 4092,
      "guid": {"scheme": "derived", "policy": "Follow"}, "require_port_active": true}],
      "timeouts": {"numvfs_ms": 120000}})";
  return {t, config};
}

// The kernel's CPU time for one netdev rename on this machine, which no daemon that
// names netdevs can spend less than: renames of an ifb device in a namespace of its
// own, timed on the renaming thread (RUSAGE_THREAD). -1 when it could not be measured.
double rename_cpu_us() {
  const std::string ns = "vfbench-rename-" + std::to_string(getpid());
  if (sh("ip netns add " + ns + " && ip -n " + ns + " link add vfb0 type ifb").exit_code != 0) {
    return -1;
  }
  constexpr int kRenames = 1000;
  double us = -1;
  std::thread([&] {
    const int fd = open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
      return;
    }
    close(fd);
    vfready::host::NetlinkLinks links;
    const auto link = links.by_name("vfb0");
    if (!link) {
      return;
    }
    const auto cpu_us = [] {
      rusage u{};
      getrusage(RUSAGE_THREAD, &u);
      return static_cast<double>(u.ru_stime.tv_sec + u.ru_utime.tv_sec) * 1e6 +
             static_cast<double>(u.ru_stime.tv_usec + u.ru_utime.tv_usec);
    };
    const double before = cpu_us();
    for (int i = 0; i < kRenames; ++i) {
      if (links.rename(link->ifindex, i % 2 == 0 ? "vfb1" : "vfb0") != 0) {
        return;
      }
    }
    us = (cpu_us() - before) / kRenames;
  }).join();
  sh("ip netns del " + ns);
  return us;
}

// Runs of one bring-up, as one: the median of each figure (time, CPU, user CPU, peak
// RSS) and the last run's counts (the same in every run); a run that failed (no READY,
// an exit other than 0) fails them all, so that no median hides it.
Run median_run(const std::vector<Run>& runs) {
  Run out = runs.back();
  for (const auto& r : runs) {
    if (r.ready_ms < 0 || r.exit_code != 0) {
      out = r;
      out.ready_ms = -1;
      return out;
    }
  }
  const auto median = [&](double Run::*field) {
    std::vector<double> v;
    for (const auto& r : runs) {
      v.push_back(r.*field);
    }
    return percentile(v, 50);
  };
  out.ready_ms = median(&Run::ready_ms);
  out.cpu_ms = median(&Run::cpu_ms);
  out.user_cpu_ms = median(&Run::user_cpu_ms);
  out.rss_mib = median(&Run::rss_mib);
  out.peak_threads = median(&Run::peak_threads);
  return out;
}

// The scale group at `probe` ms per VF probe. At the largest count, time to READY within
// `target` x the fake host's floor in the bring-up's order (each VF renamed once udev is
// done with it), measured in the same run (the median of three pairs), peak RSS within
// 9 MiB and at most 2 threads (issue 46's goals).
void scale(std::vector<Figure>& out, bool quick, uint32_t probe, double target) {
  std::vector<int> counts = {8, 32, 127};
  if (quick) {
    counts = {8, 32};
  }
  // At the largest count, the one with targets, vfready and the floor take turns three
  // times: one pair moves by a third with the machine's hour, and a verdict on one pair
  // would be the machine's as much as vfready's. Its figures are the medians.
  std::vector<Run> runs;
  std::vector<double> floors;
  std::vector<double> ratios;  // vfready / floor of each pair, at the largest count
  // The floor with each VF's netdev renamed, and vfready / it, each pair's.
  std::vector<double> renamed_floors;
  std::vector<double> renamed_ratios;
  // The floor renaming each VF once udev is done with it, as vfready does.
  std::vector<double> after_udev_floors;
  std::vector<double> after_udev_ratios;
  // A failed run or floor makes its pair's ratio -1: no measurement, never met.
  const auto ratio = [](double ready, double floor) {
    return ready < 0 || floor <= 0 ? -1.0 : ready / floor;
  };
  for (int vfs : counts) {
    auto [topology, config] = scaled(vfs, probe);
    const bool largest = vfs == counts.back();
    const int pairs = largest && !quick ? 3 : 1;
    std::vector<Run> these;
    std::vector<double> their_floors;
    for (int pair = 0; pair < pairs; ++pair) {
      {
        FakeHost host(topology, std::chrono::minutes(1));
        const auto path = write_config(host, config);
        quiet_cpus();
        these.push_back(run_vfready(host, path));
      }
      {
        FakeHost host(topology, std::chrono::minutes(1));
        quiet_cpus();
        their_floors.push_back(probe_floor(host, topology, vfs));
      }
      if (largest) {
        ratios.push_back(ratio(these.back().ready_ms, their_floors.back()));
        {
          FakeHost host(topology, std::chrono::minutes(1));
          quiet_cpus();
          renamed_floors.push_back(probe_floor(host, topology, vfs, FloorRenames::kBesideProbes));
          renamed_ratios.push_back(ratio(these.back().ready_ms, renamed_floors.back()));
        }
        FakeHost host(topology, std::chrono::minutes(1));
        quiet_cpus();
        after_udev_floors.push_back(probe_floor(host, topology, vfs, FloorRenames::kAfterUdev));
        after_udev_ratios.push_back(ratio(these.back().ready_ms, after_udev_floors.back()));
      }
    }
    runs.push_back(median_run(these));
    floors.push_back(median_of(their_floors));
  }
  const std::string s = "scale: 16 PFs (vf_probe_ms " + std::to_string(probe) + ")";
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const double total = 16.0 * counts[i];
    const double critical = static_cast<double>(counts[i]) * probe;
    const auto label = std::to_string(static_cast<int>(total)) + " VFs";
    const bool largest = i + 1 == counts.size();
    out.push_back({s, label + ": exec to READY=1", runs[i].ready_ms, "ms", {}, ""});
    out.push_back({s, label + ": / critical path", runs[i].ready_ms / critical, "x", {}, ""});
    out.push_back(
        {s, label + ": fake host's floor (numvfs + probes only)", floors[i], "ms", {}, ""});
    const auto each = [](const std::vector<double>& v) {
      std::string text;
      for (const double r : v) {
        text += (text.empty() ? "" : ", ") + fixed(r, 2);
      }
      return text;
    };
    if (largest && ratios.size() > 1) {
      const auto pairs = std::to_string(ratios.size());
      const auto text = each(ratios);
      out.push_back({s,
                     label + ": / fake host's floor, median of " + pairs + " pairs",
                     median_of(ratios),
                     "x",
                     {},
                     "pairs: " + text});
    } else {
      out.push_back(
          {s, label + ": / fake host's floor", runs[i].ready_ms / floors[i], "x", {}, ""});
    }
    if (largest && !renamed_floors.empty()) {
      const auto text = each(renamed_ratios);
      out.push_back({s,
                     label + ": floor with each VF renamed",
                     median_of(renamed_floors),
                     "ms",
                     {},
                     "the floor and one rename a VF (netlink, by ifindex)"});
      out.push_back({s,
                     label + ": / floor with each VF renamed",
                     median_of(renamed_ratios),
                     "x",
                     {},
                     "median (pairs: " + text + ")"});
      out.push_back({s,
                     label + ": floor renaming each VF after udev (the bring-up's order)",
                     median_of(after_udev_floors),
                     "ms",
                     {},
                     "each VF renamed once udev is done with it, to its configured name"});
      out.push_back({s, label + ": / floor renaming after udev", median_of(after_udev_ratios), "x",
                     target,
                     fixed(target, 2) + ", median (pairs: " + each(after_udev_ratios) + ")"});
    }
    out.push_back(
        {s, label + ": daemon CPU per VF", runs[i].cpu_ms * 1000.0 / total, "us", {}, ""});
    out.push_back({s,
                   label + ": of it user (vfready's own code)",
                   runs[i].user_cpu_ms * 1000.0 / total,
                   "us",
                   {},
                   ""});
    out.push_back({s, label + ": peak RSS", runs[i].rss_mib, "MiB",
                   largest ? std::optional(9.0) : std::nullopt, largest ? "9 MiB" : ""});
    out.push_back({s, label + ": threads of vfreadyd until READY (peak)", runs[i].peak_threads, "",
                   largest ? std::optional(2.0) : std::nullopt,
                   largest ? "2 (/proc/PID/task every 10 ms)" : ""});
  }
  // What the largest bring-up cost per VF in operations, the same on every machine:
  // vfreadyd's own count of its calls, and the fake host's of the FUSE requests they made.
  const auto& last = runs.back();
  const double vfs = 16.0 * counts.back();
  const auto per_vf = std::to_string(static_cast<int>(vfs)) + " VFs, per VF: ";
  for (const auto& [name, n] : last.calls) {
    out.push_back({s, per_vf + name, n / vfs, "", {}, "vfreadyd's count"});
  }
  double fuse_total = 0;
  for (const auto& [kind, n] : last.fuse) {
    fuse_total += n;
    if (n > 0) {
      out.push_back({s, per_vf + "FUSE " + kind, n / vfs, "", {}, "the fake host's count"});
    }
  }
  out.push_back({s, per_vf + "FUSE requests, all", fuse_total / vfs, "", {}, ""});
  out.push_back({s,
                 "kernel CPU of one netdev rename here (1000 renames of an ifb)",
                 rename_cpu_us(),
                 "us",
                 {},
                 "vfready renames each VF once, after udev has"});
  out.push_back({s,
                 "CPU growth, largest / smallest",
                 runs.back().cpu_ms / runs.front().cpu_ms,
                 "x",
                 {},
                 "VF count grew " + std::to_string(counts.back() / counts.front()) + "." +
                     std::to_string((counts.back() * 10 / counts.front()) % 10) +
                     "x: linear when close"});
}

// User-space instructions of vfreadyd's process per VF, 16 PFs x 127 VFs at 5 ms probes,
// from start to READY=1 and its exit on SIGTERM, counted by valgrind's callgrind (this
// machine's CPUs, virtual ones, count no instructions for perf), with those of its host
// readers (the planner's worker). The helper processes' instructions (system calls,
// mostly) are not counted. Under valgrind vfreadyd runs many
// times slower (its threads one at a time), so that more of its waits end at their bounds
// and its status file is written more often than in a plain run: a count of the work,
// not a time.
void instructions(std::vector<Figure>& out) {
  const char* s = "instructions (16 PFs x 127 VFs, vf_probe_ms 5, under callgrind)";
  const char* name = "user-space instructions of vfreadyd per VF, to READY and exit";
  if (sh("command -v valgrind").exit_code != 0) {
    std::cerr << "vfready_bench: instructions: no valgrind (apt-get install valgrind)\n";
    out.push_back({s, name, -1, "", 75000, "75k"});
    return;
  }
  auto [topology, config] = scaled(127, kFastProbeMs);
  FakeHost host(topology, std::chrono::minutes(1));
  const auto path = write_config(host, config);
  const auto dir = host.root() + "/callgrind";
  std::filesystem::create_directories(dir);
  quiet_cpus();
  const auto r =
      run_vfready(host, path, "valgrind --tool=callgrind --callgrind-out-file=" + dir + "/out.%p",
                  std::chrono::minutes(10));
  // "summary: <instructions>" in the file of vfreadyd's own process, plus those of its
  // host readers (the planner's worker processes, forks of vfreadyd: their files name
  // encode_host), which do work of vfready's own, unlike the helpers' system calls.
  const auto summary = [](const std::string& file, bool only_a_reader) {
    std::ifstream in(file);
    double found = -1;
    bool reader = !only_a_reader;
    for (std::string line; std::getline(in, line);) {
      reader = reader || line.find("encode_host") != std::string::npos;
      if (line.starts_with("summary: ")) {
        found = std::stod(line.substr(9));
      }
    }
    return reader ? found : -1;
  };
  double total = r.ready_ms >= 0 ? summary(dir + "/out." + std::to_string(r.pid), false) : -1;
  double readers = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    if (f.path().filename() != "out." + std::to_string(r.pid)) {
      readers += std::max(0.0, summary(f.path().string(), true));
    }
  }
  if (total >= 0) {
    std::cerr << "vfready_bench: instructions: vfreadyd " << total / (16.0 * 127)
              << " a VF, its host readers " << readers / (16.0 * 127) << " a VF\n";
    total += readers;
  }
  if (total < 0) {
    std::cerr << "vfready_bench: no callgrind summary of vfreadyd (pid " << r.pid << "):\n"
              << read_file(host.root() + "/vfreadyd.log");
  }
  // Kept for callgrind_annotate where VFREADY_BENCH_CALLGRIND names a file.
  if (const char* keep = std::getenv("VFREADY_BENCH_CALLGRIND"); keep != nullptr && total >= 0) {
    std::filesystem::copy_file(dir + "/out." + std::to_string(r.pid), keep,
                               std::filesystem::copy_options::overwrite_existing);
  }
  out.push_back({s, name, total < 0 ? -1 : total / (16.0 * 127), "", 75000, "75k"});
}

void steady_state(std::vector<Figure>& out, bool quick) {
  // A bring-up long enough to query 1000 times during it (16 PFs x 64 VFs at 50 ms per
  // probe: 3.2 s of probes), then the idle daemon.
  auto [topology, config] = scaled(quick ? 8 : 64, kReferenceProbeMs);
  FakeHost host(topology, std::chrono::minutes(1));
  PrivateBus bus(PrivateBus::Policy::kOpen);
  ServiceDaemon daemon(host, write_config(host, config), "--bus-address " + bus.address(),
                       "WATCHDOG_USEC=2000000 ");
  std::unique_ptr<vfready::bus::Client> client;
  wait_until(
      [&] {
        try {
          client = vfready::bus::Client::connect(bus.address());
          client->describe();
          return true;
        } catch (const std::exception&) {
          return false;
        }
      },
      std::chrono::seconds(20));
  std::vector<double> latencies;
  std::size_t during = 0;
  for (int i = 0; i < 1000 && client; ++i) {
    const auto t0 = Clock::now();
    const auto json = client->describe();
    latencies.push_back(ms_between(t0, Clock::now()));
    during += json.find("\"state\":\"configuring\"") != std::string::npos ? 1 : 0;
  }
  const char* s = "steady state (Describe() during a bring-up of 16 PFs x 64 VFs, vf_probe_ms 50)";
  out.push_back(
      {s, "Describe() latency p50 (1000 calls)", percentile(latencies, 50), "ms", {}, ""});
  out.push_back({s, "Describe() latency p99", percentile(latencies, 99), "ms", {}, ""});
  out.push_back({s,
                 "Describe() calls answered mid bring-up",
                 static_cast<double>(during),
                 "calls",
                 {},
                 "of 1000"});

  if (!daemon.notify().wait_for("READY=1", std::chrono::minutes(3))) {
    std::cerr << "steady state: no READY\n" << daemon.log();
    return;
  }
  daemon.notify().wait_for("WATCHDOG=1", std::chrono::seconds(3), daemon.notify().count());
  const auto switches = [&] { return voluntary_switches(daemon.process().pid()); };
  const int seconds = quick ? 10 : 60;
  const auto pings0 = daemon.notify().count("WATCHDOG=1");
  const auto switches0 = switches();
  for (int i = 0; i < seconds; ++i) {
    daemon.notify().wait_for("WATCHDOG=1", std::chrono::seconds(3), daemon.notify().count());
  }
  const auto pings = static_cast<double>(daemon.notify().count("WATCHDOG=1") - pings0);
  const auto woke = static_cast<double>(switches() - switches0);
  out.push_back({s, "idle wake-ups over " + std::to_string(seconds) + " s", woke, "", pings + 5,
                 "watchdog pings + 5"});
  out.push_back({s, "watchdog pings in that time", pings, "", {}, ""});
}

void repair(std::vector<Figure>& out, bool quick) {
  auto topology = TopologyBuilder::reference();
  const auto pfs = ib_pfs(topology);
  FakeHost host(topology);
  ServiceDaemon daemon(host, repo_config(), "--no-bus");
  if (!daemon.notify().wait_for("READY=1", std::chrono::minutes(1))) {
    std::cerr << "repair: no READY\n" << daemon.log();
    return;
  }
  const auto sys = host.root() + "/sys/bus/pci/";
  std::vector<double> latencies;
  const int rounds = quick ? 20 : 100;
  for (int i = 0; i < rounds; ++i) {
    const auto& pf = pfs[static_cast<std::size_t>(i) % pfs.size()];
    const int v = (i / static_cast<int>(pfs.size())) % 8;
    const auto vf = vf_pci(pf, v);
    const auto from = daemon.notify().count();
    const auto t0 = Clock::now();
    sh("echo 00:00:00:00:00:00:00:00 > " + sys + "devices/" + pf + "/sriov/" + std::to_string(v) +
       "/port && echo " + vf + " > " + sys + "drivers/mlx5_core/unbind && echo " + vf + " > " +
       sys + "drivers/mlx5_core/bind");
    if (!daemon.notify().wait_for("STATUS=ready: 8/8 PFs ready", std::chrono::seconds(10), from)) {
      std::cerr << "repair: VF " << vf << " was not repaired within 10 s; vfreadyd said:\n"
                << daemon.log().substr(daemon.log().size() > 2000 ? daemon.log().size() - 2000 : 0);
      continue;
    }
    latencies.push_back(ms_between(t0, *daemon.notify().arrival_of("STATUS=ready", from)));
  }
  const char* s = "repair: a VF re-created with a zero GUID (vf_probe_ms 20)";
  out.push_back({s,
                 "rebinds repaired",
                 static_cast<double>(latencies.size()),
                 "",
                 {},
                 "of " + std::to_string(rounds)});
  out.push_back({s, "until name and GUID are back, p50", percentile(latencies, 50), "ms", {}, ""});
  out.push_back(
      {s, "until name and GUID are back, p99", percentile(latencies, 99), "ms", 1000, "1 s"});
}

std::string machine() {
  utsname u{};
  uname(&u);
  std::ifstream cpu("/proc/cpuinfo");
  std::string line;
  std::string model;
  while (std::getline(cpu, line)) {
    if (line.starts_with("model name")) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  }
  return std::string(u.release) + ", " + std::to_string(std::thread::hardware_concurrency()) +
         " CPUs (" + model + ")";
}

}  // namespace

int main(int argc, char** argv) {
  std::string json_path;
  bool quick = false;
  std::string only;
  const std::vector<std::string> groups = {"time-to-ready", "scale", "instructions", "steady-state",
                                           "repair"};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json" && i + 1 < argc) {
      json_path = argv[++i];
    } else if (a == "--quick") {
      quick = true;
    } else if (a == "--only" && i + 1 < argc &&
               std::find(groups.begin(), groups.end(), argv[i + 1]) != groups.end()) {
      only = argv[++i];
    } else {
      std::cerr << "usage: vfready_bench [--json FILE] [--quick] [--only GROUP]\n"
                   "  GROUP: time-to-ready, scale, instructions, steady-state or repair\n";
      return 2;
    }
  }
  if (geteuid() != 0) {
    std::cerr << "vfready_bench: needs root (namespaces, FUSE)\n";
    return 2;
  }
  std::vector<Figure> figures;
  const auto start = Clock::now();
  const auto phase = [&](const std::string& name) {
    if (!only.empty() && name != only) {
      return false;
    }
    std::cerr << "vfready_bench: " << name << " ("
              << static_cast<int>(duration<double>(Clock::now() - start).count()) << " s)\n";
    return true;
  };
  if (phase("time-to-ready")) {
    time_to_ready(figures);
  }
  if (phase("scale")) {
    scale(figures, quick, kScaleProbeMs, 1.03);
    scale(figures, quick, kFastProbeMs, 1.08);
  }
  if (phase("instructions") && !quick) {
    instructions(figures);  // 2,032 VFs under callgrind: some 20 s here, up to 10 min
  }
  if (phase("steady-state")) {
    steady_state(figures, quick);
  }
  if (phase("repair")) {
    repair(figures, quick);
  }
  std::printf("vfready benchmarks on %s, %.0f s\n\n", machine().c_str(),
              duration<double>(Clock::now() - start).count());
  print_table(figures);
  const auto json = to_json(figures, machine());
  if (!json_path.empty()) {
    std::ofstream(json_path) << json << '\n';
  } else {
    std::printf("\n%s\n", json.c_str());
  }
  return 0;
}
