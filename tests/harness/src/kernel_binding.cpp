// SPDX-License-Identifier: Apache-2.0
// Driver binding as the driver core does it: bind, unbind and drivers_probe writes, each
// VF's device lock, and vfio-pci's hold of a VF.
#include <cerrno>

#include "kernel.hpp"

namespace vfready::fakehost {

bool Kernel::lock_vf(Pf& pf, uint16_t i) {
  std::unique_lock lock(mu_);
  vf_lock_cv_.wait(lock, [&] { return i >= pf.vfs.size() || !pf.vfs[i].locked; });
  if (i >= pf.vfs.size()) {
    return false;
  }
  pf.vfs[i].locked = true;
  return true;
}

void Kernel::unlock_vf(Pf& pf, uint16_t i) {
  std::lock_guard lock(mu_);
  if (i < pf.vfs.size()) {
    pf.vfs[i].locked = false;
  }
  vf_lock_cv_.notify_all();
}

void Kernel::unbind_vf(std::size_t index, uint16_t i) {
  Pf& pf = *pfs_[index];
  let_go_of_netdev(pf, i);
  std::lock_guard lock(mu_);
  if (i < pf.vfs.size()) {
    Vf& vf = pf.vfs[i];
    vf.bound = false;
    vf.leaving = false;
    remove_vf_rdma(vf);
    tree_.remove(vf.dir + "/driver");
    tree_.remove("bus/pci/drivers/mlx5_core/" + vf.pci.str());
  }
}

std::optional<Kernel::Owner> Kernel::owner_of_pci(std::string_view text) {
  auto pci = model::PciAddress::parse(chomp(text));
  // The driver core matches device names exactly.
  if (!pci || pci->str() != chomp(text)) {
    return std::nullopt;
  }
  std::lock_guard lock(mu_);
  auto it = functions_.find(pci.value());
  return it == functions_.end() ? std::nullopt : std::optional<Owner>(it->second);
}

int Kernel::hold_vf(std::size_t index, uint16_t i, const std::string& driver) {
  Pf& pf = *pfs_[index];
  // A bind waits for a probe of the VF in progress (its device lock), then finds it
  // taken: __driver_probe_device(), drivers/base/dd.c.
  if (!lock_vf(pf, i)) {
    return ENODEV;
  }
  const VfUnlock unlock{this, &pf, i};
  return hold_vf_locked(pf, i, driver);
}

int Kernel::hold_vf_locked(Pf& pf, uint16_t i, const std::string& driver) {
  std::lock_guard lock(mu_);
  if (i >= pf.vfs.size()) {
    return ENODEV;
  }
  Vf& vf = pf.vfs[i];
  if (vf.bound || !vf.held_by.empty()) {
    return EBUSY;
  }
  vf.held_by = driver;
  tree_.add_link(vf.dir + "/driver", "../../../bus/pci/drivers/" + driver);
  tree_.add_link("bus/pci/drivers/" + driver + "/" + vf.pci.str(), "../../../../" + vf.dir);
  return 0;
}

int Kernel::release_vf(std::size_t index, uint16_t i, const std::string& driver) {
  Pf& pf = *pfs_[index];
  // unbind_store(): whether the driver has the device is asked without its lock; an
  // unbind that then waited for another one finds nothing left to do, and succeeds.
  {
    std::lock_guard lock(mu_);
    if (i >= pf.vfs.size() || pf.vfs[i].held_by != driver) {
      return ENODEV;
    }
  }
  if (!lock_vf(pf, i)) {
    return 0;  // removed meanwhile, and its driver with it
  }
  const VfUnlock unlock{this, &pf, i};
  std::lock_guard lock(mu_);
  if (pf.vfs[i].held_by != driver) {
    return 0;
  }
  Vf& vf = pf.vfs[i];
  vf.held_by.clear();
  tree_.remove(vf.dir + "/driver");
  tree_.remove("bus/pci/drivers/" + driver + "/" + vf.pci.str());
  return 0;
}

int Kernel::write_bind(std::string_view value, bool probe_only, const std::string& driver) {
  auto owner = owner_of_pci(value);
  if (!owner) {
    return ENODEV;
  }
  Pf& pf = *pfs_[owner->pf];
  // What a probe that did not bind answers: drivers_probe_store() reports none of it
  // (success whenever the device exists); bind_store() returns the probe's error.
  const auto answer = [probe_only](int err) { return probe_only ? 0 : err; };
  if (owner->vf) {
    // driver_override names the only driver that may take the VF (drivers_probe takes
    // that one); vfio-pci, with no IDs of its own, takes only a VF so named.
    std::string wanted = driver;
    {
      std::lock_guard lock(mu_);
      if (*owner->vf >= pf.vfs.size()) {
        return ENODEV;
      }
      const auto& vf = pf.vfs[*owner->vf];
      if (probe_only && !vf.driver_override.empty()) {
        wanted = vf.driver_override;
      }
      // bind_store() matches first (driver_match_device(): driver_override, then the ID
      // table): no match is ENODEV, bound or not (drivers/base/bus.c).
      if (!vf.driver_override.empty() && vf.driver_override != wanted) {
        return answer(ENODEV);
      }
      if (wanted != "mlx5_core" && vf.driver_override != wanted) {
        return answer(ENODEV);
      }
      if (!vf.held_by.empty() || vf.bound) {
        return answer(EBUSY);  // __driver_probe_device(): a device with a driver is busy
      }
      // pci_device_probe() starts with pci_device_can_probe(): a VF is probed only
      // while its PF's sriov_drivers_autoprobe is on or its driver_override is set;
      // otherwise -ENODEV, which the driver core takes as "no match".
      if (!pf.autoprobe && vf.driver_override.empty()) {
        return answer(ENODEV);
      }
    }
    if (wanted != "mlx5_core") {
      return answer(hold_vf(owner->pf, *owner->vf, wanted));
    }
  } else if (driver != "mlx5_core") {
    return ENODEV;  // no other driver takes a PF here
  }
  if (!owner->vf) {
    // Under the PF's device lock: a bind during a remove waits for it, then binds.
    std::lock_guard device(pf.sriov_mu);
    std::string name;
    {
      std::lock_guard lock(mu_);
      if (pf.bound) {
        return answer(EBUSY);
      }
      pf.bound = true;
      tree_.add_link(pf.dir + "/driver", "../../../bus/pci/drivers/mlx5_core");
      tree_.add_link("bus/pci/drivers/mlx5_core/" + pf.spec->pci.str(), "../../../../" + pf.dir);
      name = pf.spec->netdev.value_or("");
    }
    if (!name.empty()) {
      bring_up_netdev(owner->pf, std::nullopt, name, /*at_boot=*/false);
    }
    return 0;
  }
  // The VF's device lock, and no other: the driver core takes a parent's lock only
  // where the bus sets need_parent_lock (__device_driver_lock(), drivers/base/dd.c), which
  // PCI does not, and a VF's parent is its PF's bus, not the PF (pci_iov_add_virtfn()).
  if (!lock_vf(pf, *owner->vf)) {
    return ENODEV;
  }
  const VfUnlock unlock{this, &pf, *owner->vf};
  {
    std::lock_guard lock(mu_);
    // Taken meanwhile (vfio-pci's bind, between the checks above and its lock).
    if (pf.vfs[*owner->vf].bound || !pf.vfs[*owner->vf].held_by.empty()) {
      return answer(EBUSY);
    }
  }
  // A probe that fails (or a hung one released with an error) leaves the VF unbound.
  return answer(probe_vf(owner->pf, *owner->vf));
}

int Kernel::write_unbind(std::string_view value, const std::string& driver) {
  auto owner = owner_of_pci(value);
  if (!owner) {
    return ENODEV;
  }
  Pf& pf = *pfs_[owner->pf];
  if (driver != "mlx5_core") {
    return owner->vf ? release_vf(owner->pf, *owner->vf, driver) : ENODEV;
  }
  if (owner->vf) {
    // As the PF's below: asked without the lock, then nothing to do once it is had.
    {
      std::lock_guard lock(mu_);
      if (*owner->vf >= pf.vfs.size() || !pf.vfs[*owner->vf].bound) {
        return ENODEV;
      }
    }
    if (!lock_vf(pf, *owner->vf)) {
      return 0;  // removed meanwhile, and its driver with it
    }
    const VfUnlock unlock{this, &pf, *owner->vf};
    {
      std::lock_guard lock(mu_);
      if (!pf.vfs[*owner->vf].bound) {
        return 0;
      }
    }
    unbind_vf(owner->pf, *owner->vf);
    return 0;
  }
  // unbind_store() asks whether the driver has the device without its lock (ENODEV when
  // not), then device_release_driver() takes the lock for the whole remove, which a
  // sriov_numvfs write takes too: a write waits, then finds no driver. An unbind that
  // waited for another one's remove finds nothing left to do, and succeeds.
  {
    std::lock_guard lock(mu_);
    if (!pf.bound) {
      return ENODEV;
    }
  }
  std::lock_guard device(pf.sriov_mu);
  {
    std::lock_guard lock(mu_);
    if (!pf.bound) {
      return 0;
    }
    pf.leaving = true;  // a netdev of its given back from a pod now is not taken back
  }
  // Removing the PF driver disables SR-IOV first, as mlx5's remove does.
  disable_vfs(owner->pf);
  take_down_netdev(Owner{owner->pf, std::nullopt});
  unregister_departed(Owner{owner->pf, std::nullopt});
  std::lock_guard lock(mu_);
  pf.bound = false;
  pf.leaving = false;
  tree_.remove(pf.dir + "/driver");
  tree_.remove("bus/pci/drivers/mlx5_core/" + pf.spec->pci.str());
  return 0;
}

}  // namespace vfready::fakehost
