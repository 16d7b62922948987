// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/host_info_bytes.hpp"

#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "vfready/model/byte_fields.hpp"

namespace vfready::model {

namespace {

// Bumped whenever a field is added, moved or dropped.
constexpr uint32_t kFormat = 1;

// Each field as bytes (ByteWriter's): an optional as a flag and (when set) its value, a
// value with a text form as that text. Out writes what In reads, field by field in the
// order fields() gives.
class Out {
 public:
  template <class T>
  void field(const T& v) {
    w_.number(v);
  }
  void field(const std::string& s) { w_.text(s); }
  template <class T>
  void field(const std::optional<T>& v) {
    field(v.has_value());
    if (v) {
      field(*v);
    }
  }
  void field(const Guid& g) { field(g.value()); }
  void field(const Mac& m) { field(m.str()); }
  void field(const Version& v) { field(v.str()); }
  void field(const PciAddress& a) { field(a.str()); }
  template <class T, class Each>
  void list(const std::vector<T>& items, std::size_t /*least*/, Each each) {
    field(static_cast<uint32_t>(items.size()));
    for (const auto& item : items) {
      each(*this, item);
    }
  }
  std::string take() { return w_.take(); }

 private:
  ByteWriter w_;
};

// Reads what Out wrote; throws std::out_of_range when the bytes end first or a value is
// not one.
class In {
 public:
  explicit In(std::string_view bytes) : r_(bytes) {}
  template <class T>
  void field(T& v) {
    v = r_.number<T>();
  }
  void field(std::string& s) { s = r_.text(); }
  template <class T>
  void field(std::optional<T>& v) {
    bool has = false;
    field(has);
    v.reset();
    if (has) {
      v = value<T>();
    }
  }
  void field(bool& b) {
    const auto v = r_.number<uint8_t>();
    if (v > 1) {
      throw std::out_of_range("a flag that is neither 0 nor 1");
    }
    b = v == 1;
  }
  void field(PciAddress& a) { a = parsed<PciAddress>(); }
  // A count of items each at least `least` bytes long: no more than the bytes left hold.
  template <class T, class Each>
  void list(std::vector<T>& items, std::size_t least, Each each) {
    const auto n = r_.number<uint32_t>();
    if (n > r_.left() / least) {
      throw std::out_of_range("a count larger than the bytes left");
    }
    items.resize(n);
    for (auto& item : items) {
      each(*this, item);
    }
  }
  [[nodiscard]] bool done() const { return r_.done(); }

 private:
  template <class T>
  T value() {
    if constexpr (std::is_same_v<T, Guid>) {
      return Guid(r_.number<uint64_t>());
    } else if constexpr (std::is_same_v<T, Mac> || std::is_same_v<T, Version>) {
      return parsed<T>();
    } else {
      T v{};
      field(v);
      return v;
    }
  }
  template <class T>
  T parsed() {
    const auto text = r_.text();
    auto v = T::parse(text);
    if (!v) {
      throw std::out_of_range("a value that is none: " + text);
    }
    return v.value();
  }
  ByteReader r_;
};

// The least a VF, a port or a PF takes as bytes (every optional empty, every text but
// the PCI address's empty): a bound on a count that is read. A VF: index 2, PCI address
// 4 + 12, driver and netdev 1 each, ifindex 4, GUIDs and MAC 1 each.
constexpr std::size_t kLeastVf = 27;
constexpr std::size_t kLeastPort = 17;
constexpr std::size_t kLeastPf = 60;

template <class Io, class... T>
void fields(Io& io, T&... v) {
  (io.field(v), ...);
}

template <class Io, class Vf>
void vf_fields(Io& io, Vf& vf) {
  fields(io, vf.index, vf.pci, vf.driver, vf.netdev, vf.ifindex, vf.node_guid, vf.effective_guid,
         vf.mac);
}

template <class Io, class Port>
void port_fields(Io& io, Port& p) {
  fields(io, p.link_layer, p.state, p.phys_state, p.state_error, p.state_unread);
}

template <class Io, class Pf>
void pf_fields(Io& io, Pf& pf) {
  fields(io, pf.pci, pf.vendor, pf.device, pf.vf_device, pf.driver, pf.vf_driver,
         pf.vf_driver_loaded, pf.numa_node, pf.netdev, pf.ifindex, pf.netdev_type, pf.permanent_mac,
         pf.sriov, pf.totalvfs, pf.numvfs, pf.first_vf_offset, pf.vf_stride, pf.autoprobe,
         pf.ib_device, pf.rdma_over_netdev, pf.firmware, pf.firmware_text, pf.node_guid,
         pf.ofed_sriov);
  io.list(pf.ports, kLeastPort, [](Io& i, auto& p) { port_fields(i, p); });
  io.list(pf.vfs, kLeastVf, [](Io& i, auto& vf) { vf_fields(i, vf); });
  fields(io, pf.stuck);
}

template <class Io, class Host>
void host_fields(Io& io, Host& host) {
  io.field(host.kernel_release);
  // The modules as a list of (name, version): a map is written in its order.
  std::vector<std::pair<std::string, std::optional<std::string>>> modules(host.modules.begin(),
                                                                          host.modules.end());
  io.list(modules, sizeof(uint32_t) + 1, [](Io& i, auto& m) {
    i.field(m.first);
    i.field(m.second);
  });
  if constexpr (!std::is_const_v<Host>) {
    host.modules = {modules.begin(), modules.end()};
  }
  io.list(host.kernel_log, sizeof(uint32_t), [](Io& i, auto& line) { i.field(line); });
  io.list(host.functions, kLeastPf, [](Io& i, auto& pf) { pf_fields(i, pf); });
}

}  // namespace

std::string encode_host(const HostInfo& host) {
  Out o;
  o.field(kFormat);
  host_fields(o, host);
  return o.take();
}

Result<HostInfo> decode_host(std::string_view bytes) {
  try {
    In in(bytes);
    uint32_t format = 0;
    in.field(format);
    if (format != kFormat) {
      return Error{"the host's bytes are of format " + std::to_string(format) + ", not " +
                   std::to_string(kFormat)};
    }
    HostInfo host;
    host_fields(in, host);
    if (!in.done()) {
      return Error{"the host's bytes go on past their end"};
    }
    return host;
  } catch (const std::out_of_range& e) {
    return Error{std::string("the host's bytes are not a host: ") + e.what()};
  }
}

}  // namespace vfready::model
