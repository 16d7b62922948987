// SPDX-License-Identifier: Apache-2.0
#include "udev_sim.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace vfready::fakehost {

UdevSim::UdevSim(std::string run_dir, std::chrono::milliseconds latency, Scheduler& scheduler,
                 UdevMessages& messages, bool announces, bool running)
    : run_dir_(std::move(run_dir)),
      latency_(latency),
      scheduler_(scheduler),
      messages_(messages),
      announces_(announces) {
  if (running) {
    start();
  }
}

void UdevSim::start() const { std::ofstream(run_dir_ + "/control").flush(); }

std::string UdevSim::db_path(int ifindex) const {
  return run_dir_ + "/data/n" + std::to_string(ifindex);
}

void UdevSim::add(int ifindex, const std::string& driver) {
  unsigned generation = 0;
  {
    std::lock_guard lock(mu_);
    generation = ++generation_;
    pending_[ifindex] = generation;
    update_queue_file();
  }
  scheduler_.after(latency_,
                   [this, ifindex, driver, generation] { finish(ifindex, driver, generation); });
}

void UdevSim::add_initialized(int ifindex, const std::string& driver) { write_db(ifindex, driver); }

void UdevSim::remove(int ifindex) {
  std::lock_guard lock(mu_);
  pending_.erase(ifindex);
  held_moves_.erase(ifindex);
  unlink(db_path(ifindex).c_str());
  update_queue_file();
}

bool UdevSim::pending(int ifindex, unsigned generation) {
  std::lock_guard lock(mu_);
  const auto it = pending_.find(ifindex);
  return it != pending_.end() && it->second == generation;
}

void UdevSim::finish(int ifindex, const std::string& driver, unsigned generation) {
  if (!pending(ifindex, generation)) {
    return;
  }
  const auto naming = rules_ ? rules_(ifindex) : UdevNaming{};
  if (naming.rename) {
    // Saved before the rename, so that a client that hears of it finds the netdev
    // marked as being renamed: not initialized for systemd-networkd, nor for vfready.
    {
      std::lock_guard lock(mu_);
      const auto it = pending_.find(ifindex);
      if (it == pending_.end() || it->second != generation) {
        return;  // removed while its rules ran
      }
      write_db(ifindex, driver, /*renaming=*/true);
    }
    if (renaming_window_.count() > 0) {
      scheduler_.after(renaming_window_, [this, ifindex, driver, generation, naming] {
        complete(ifindex, driver, generation, naming);
      });
      return;
    }
  }
  complete(ifindex, driver, generation, naming);
}

void UdevSim::complete(int ifindex, const std::string& driver, unsigned generation,
                       const UdevNaming& naming) {
  if (!pending(ifindex, generation)) {
    return;  // removed meanwhile
  }
  if (apply_) {
    apply_(ifindex, naming);  // a rename makes the kernel's move, held back below
  }
  std::lock_guard order(order_mu_);
  std::vector<std::string> moves;
  {
    std::lock_guard lock(mu_);
    auto it = pending_.find(ifindex);
    if (it == pending_.end() || it->second != generation) {
      return;  // removed while its rules ran
    }
    write_db(ifindex, driver, naming.rename.has_value());
    pending_.erase(it);
    if (auto held = held_moves_.find(ifindex); held != held_moves_.end()) {
      moves = std::move(held->second);
      held_moves_.erase(held);
    }
    update_queue_file();
  }
  // As udevd: the database first, then the message (a monitor's reader looks it up);
  // then the device's events that waited for it, the move of its own rename first,
  // which drops ID_RENAMING.
  if (announces_) {
    announce("add", ifindex, driver);
  }
  if (naming.rename) {
    std::lock_guard lock(mu_);
    if (access(db_path(ifindex).c_str(), F_OK) == 0) {  // not removed meanwhile
      write_db(ifindex, driver);
    }
  }
  if (announces_) {
    for (const auto& old_devpath : moves) {
      announce("move", ifindex, driver, old_devpath);
    }
  }
}

void UdevSim::moved(int ifindex, const std::string& old_devpath) {
  std::lock_guard order(order_mu_);
  {
    std::lock_guard lock(mu_);
    if (pending_.contains(ifindex)) {
      held_moves_[ifindex].push_back(old_devpath);  // after its add
      return;
    }
  }
  announce("move", ifindex, "mlx5_core", old_devpath);
}

void UdevSim::late_add(int ifindex, const Netdev& netdev, const std::string& driver) {
  if (announces_) {
    send("add", ifindex, netdev, driver);
  }
}

void UdevSim::announce(const std::string& action, int ifindex, const std::string& driver,
                       const std::string& old_devpath) {
  const auto netdev = describe_ ? describe_(ifindex) : std::nullopt;
  if (!netdev) {
    return;  // gone meanwhile: udevd sends its remove instead
  }
  send(action, ifindex, *netdev, driver, old_devpath);
}

void UdevSim::send(const std::string& action, int ifindex, const Netdev& netdev,
                   const std::string& driver, const std::string& old_devpath) {
  std::vector<std::pair<std::string, std::string>> properties = {
      {"INTERFACE", netdev.name}, {"IFINDEX", std::to_string(ifindex)}, {"ID_NET_DRIVER", driver}};
  if (!old_devpath.empty()) {
    properties.emplace_back("DEVPATH_OLD", old_devpath);
  }
  messages_.send(action, netdev.devpath, "net", properties);
}

void UdevSim::write_db(int ifindex, const std::string& driver, bool renaming) const {
  const auto path = db_path(ifindex);
  const auto tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    const auto usec = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
    out << "I:" << usec << "\nE:ID_NET_DRIVER=" << driver << "\n";
    if (renaming) {
      out << "E:ID_RENAMING=1\n";
    }
    out << "G:systemd\n";
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    unlink(tmp.c_str());
  }
}

void UdevSim::update_queue_file() const {
  const auto queue = run_dir_ + "/queue";
  if (pending_.empty()) {
    unlink(queue.c_str());
  } else {
    std::ofstream(queue, std::ios::app).flush();
  }
}

}  // namespace vfready::fakehost
