// SPDX-License-Identifier: Apache-2.0
// vfready-fakehost: plays the kernel of a machine described by a topology file, so that
// vfreadyd and its tests run against sysfs, netlink and udev that behave like a DGX's.
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "cache_warmup.hpp"
#include "errno_text.hpp"
#include "fuse_mount.hpp"
#include "host_exec.hpp"
#include "host_logs.hpp"
#include "kernel.hpp"
#include "netdevs.hpp"
#include "netns.hpp"
#include "scheduler.hpp"
#include "topology.hpp"
#include "tree.hpp"
#include "udev_sim.hpp"

namespace fs = std::filesystem;
using namespace vfready::fakehost;

namespace {

bool is_mountpoint(const fs::path& dir) {
  struct stat self {};
  struct stat parent {};
  return ::stat(dir.c_str(), &self) == 0 && ::stat(dir.parent_path().c_str(), &parent) == 0 &&
         self.st_dev != parent.st_dev;
}

// Detaches a mount when the fake host ends, however it ends (short of SIGKILL).
struct DetachOnExit {
  explicit DetachOnExit(fs::path d) : dir(std::move(d)) {}
  fs::path dir;
  DetachOnExit(const DetachOnExit&) = delete;
  DetachOnExit& operator=(const DetachOnExit&) = delete;
  ~DetachOnExit() { static_cast<void>(umount2(dir.c_str(), MNT_DETACH)); }
};

// The plain-file parts of the host: proc, the kernel log's directory, udev's run dir.
// run/ is a tmpfs, as /run is: udev's database files come and go with every netdev, and
// on the disk under /tmp (ext4) making and deleting them was most of the fake host's
// CPU time at 2,000 VFs (inode allocation scanning recently deleted inodes).
void prepare_root(const fs::path& root, const Topology& topology) {
  fs::create_directories(root / "sys");
  fs::create_directories(root / "proc/sys/kernel");
  fs::create_directories(root / "dev");
  fs::create_directories(root / "run");
  if (is_mountpoint(root / "run")) {
    static_cast<void>(umount2((root / "run").c_str(), MNT_DETACH));  // a dead fake host's
  }
  if (mount("tmpfs", (root / "run").c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0) {
    throw std::runtime_error("cannot mount a tmpfs at " + (root / "run").string() + ": " +
                             errno_text(errno));
  }
  fs::create_directories(root / "run/udev/data");
  std::ofstream(root / "proc/sys/kernel/osrelease") << topology.kernel_release << '\n';
}

int run(const std::string& topology_path, const std::string& root_arg, const std::string& netns) {
  auto topology = load_topology(topology_path);
  if (!topology) {
    std::cerr << "vfready-fakehost: " << topology.error().message << '\n';
    return 2;
  }
  // Threads made from here on inherit the mask: only sigwait() below sees these.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGUSR1);
  sigaddset(&signals, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  const fs::path root = fs::absolute(root_arg);
  fs::create_directories(root);
  FuseMount::clear_stale(root / "sys");
  if (is_mountpoint(root / "sys")) {
    std::cerr << "vfready-fakehost: " << (root / "sys").string()
              << " is mounted: another fake host runs on this root; pick another --root\n";
    return 1;
  }
  prepare_root(root, topology.value());
  const DetachOnExit run_mount{root / "run"};

  NamedNetns namespace_(netns);
  HostLogs logs(root);
  Scheduler scheduler;
  UdevMessages udev_messages(namespace_.fd());
  UdevSim udev(root / "run/udev", std::chrono::milliseconds(topology->udev_init_latency_ms),
               scheduler, udev_messages, topology->udev_announces,
               !topology->udev_starts_on_signal);
  udev.set_renaming_window(std::chrono::milliseconds(topology->udev_renaming_ms));
  Tree tree;
  std::atomic<Kernel*> kernel_ptr{nullptr};
  Netdevs netdevs(namespace_.fd(), [&kernel_ptr](const LinkEvent& e) {
    if (Kernel* k = kernel_ptr.load()) {
      k->on_link_event(e);
    }
  });
  Kernel kernel(topology.value(), tree, netdevs, udev, logs);
  kernel.boot();
  kernel_ptr = &kernel;
  // Should the mount fail (it throws): the listener stops calling into the kernel before
  // the kernel goes, as at the end below. Stopping twice is stopping once.
  struct StopListening {
    StopListening(std::atomic<Kernel*>& k, Netdevs& n) : kernel(k), netdevs(n) {}
    std::atomic<Kernel*>& kernel;
    Netdevs& netdevs;
    StopListening(const StopListening&) = delete;
    StopListening& operator=(const StopListening&) = delete;
    ~StopListening() {
      kernel = nullptr;
      netdevs.stop();
    }
  } stop_listening{kernel_ptr, netdevs};
  FuseMount mount(tree, root / "sys");
  mount.start();
  // Nothing is cached before the mount serves: links that change from now on.
  tree.on_links_changed(
      [&mount](const std::vector<std::string>& paths) { mount.forget_links(paths); });
  // A name kernfs finds inside the kernel costs no FUSE round trip here either.
  warm_kernel_caches(tree, (root / "sys").string());

  std::cout << "ready root=" << root_arg << " netns=" << netns << std::endl;

  int sig = 0;
  // SIGUSR1: the driver recovers from numvfs_write_hangs (a test's way to end a hang),
  // late modules load, and udevd starts if it waited for it.
  // SIGUSR2: the FUSE requests served so far go to ROOT/fuse-requests (the benchmark's
  // count of what a bring-up costs), written whole and then renamed into place.
  while (sigwait(&signals, &sig) == 0 && (sig == SIGUSR1 || sig == SIGUSR2)) {
    if (sig == SIGUSR1) {
      kernel.release_hangs();
      udev.start();
      continue;
    }
    std::ofstream(root / "fuse-requests.new") << mount.request_counts();
    std::error_code ec;
    fs::rename(root / "fuse-requests.new", root / "fuse-requests", ec);
  }
  // Blocked writes first (they hold FUSE workers), then the mount, then the rest.
  kernel.shutdown();
  tree.on_links_changed(nullptr);
  mount.stop();
  kernel_ptr = nullptr;
  netdevs.stop();
  scheduler.stop();
  namespace_.remove();
  return 0;
}

}  // namespace

namespace {

// `vfready-fakehost exec --root R --netns N -- CMD...`: CMD on the running fake host.
int exec_main(int argc, char** argv) {
  CLI::App app{
      "Runs a command on a running fake host: in its network namespace, with its sysfs, "
      "/run, kernel log and kernel release mounted where the real ones are",
      "vfready-fakehost exec"};
  std::string root;
  std::string netns;
  std::vector<std::string> command;
  app.add_option("--root", root, "The fake host's --root")->required();
  app.add_option("--netns", netns, "The fake host's --netns")->required();
  std::string stamp;
  app.add_option("--stamp", stamp,
                 "A file to write the time of the exec to (CLOCK_MONOTONIC ns), just before it");
  app.add_option("command", command, "What to run (after --)")->required();
  CLI11_PARSE(app, argc, argv);
  vfready::fakehost::exec_in_host(std::filesystem::absolute(root).string(), netns, command, stamp);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc > 1 && std::string_view(argv[1]) == "exec") {
      return exec_main(argc - 1, argv + 1);
    }
    CLI::App app{"vfready-fakehost: a simulated host (sysfs, netdevs, udev) for vfready's tests",
                 "vfready-fakehost"};
    std::string topology;
    std::string root;
    std::string netns;
    app.add_option("--topology", topology, "Topology JSON (see docs/topology.md)")
        ->required()
        ->check(CLI::ExistingFile);
    app.add_option("--root", root, "Directory to lay the host out in (sys/ is mounted there)")
        ->required();
    app.add_option("--netns", netns, "Name of the network namespace to create")->required();
    CLI11_PARSE(app, argc, argv);
    return run(topology, root, netns);
  } catch (const std::exception& e) {
    std::cerr << "vfready-fakehost: " << e.what() << '\n';
    return 1;
  }
}
