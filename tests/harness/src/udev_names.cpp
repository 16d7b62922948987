// SPDX-License-Identifier: Apache-2.0
#include "udev_names.hpp"

#include <algorithm>

namespace vfready::fakehost {

namespace {

constexpr std::size_t kMaxName = 15;  // IFNAMSIZ - 1

std::optional<std::string> fitting(std::string name) {
  return name.size() <= kMaxName ? std::optional<std::string>(std::move(name)) : std::nullopt;
}

}  // namespace

PredictableNames predictable_names(const FunctionSpec& pf, std::optional<uint16_t> vf,
                                   bool infiniband) {
  const std::string prefix = infiniband ? "ib" : "en";
  // dev_pci_slot(): "f<fn>" only for a function other than 0 (the fake host has no
  // multi-function devices); a VF's names are its PF's with "v<N>" (get_virtfn_info()).
  const auto& pci = pf.pci;
  const std::string function = pci.function() > 0 ? "f" + std::to_string(pci.function()) : "";
  const std::string virtfn = vf ? "v" + std::to_string(*vf) : "";
  PredictableNames out;
  std::string path = prefix;
  if (pci.domain() > 0) {
    path += "P" + std::to_string(pci.domain());
  }
  path += "p" + std::to_string(pci.bus()) + "s" + std::to_string(pci.device()) + function + virtfn;
  out.path = fitting(std::move(path));
  if (pf.slot) {
    out.slot = fitting(prefix + "s" + *pf.slot + function + virtfn);
  }
  return out;
}

UdevNaming udev_naming(NamePolicy policy, const PredictableNames& names,
                       const std::string& kernel_name) {
  UdevNaming out;
  std::string current = kernel_name;
  switch (policy) {
    case NamePolicy::kNone:
      return out;
    case NamePolicy::kKeep:
      break;
    case NamePolicy::kSlot:
      out.rename = names.slot ? names.slot : names.path;
      break;
    case NamePolicy::kPath:
      out.rename = names.path;
      break;
  }
  if (out.rename == current) {
    out.rename.reset();
  }
  if (out.rename) {
    current = *out.rename;
  }
  for (const auto& alt : {names.slot, names.path}) {
    if (alt && *alt != current &&
        std::find(out.altnames.begin(), out.altnames.end(), *alt) == out.altnames.end()) {
      out.altnames.push_back(*alt);
    }
  }
  return out;
}

}  // namespace vfready::fakehost
