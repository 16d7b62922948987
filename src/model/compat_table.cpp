// SPDX-License-Identifier: Apache-2.0
#include "vfready/model/compat_table.hpp"

#include "text.hpp"
#include "vfready/model/json_document.hpp"
#include "vfready/model/json_reader.hpp"

namespace vfready::model {

namespace {

Version version(const JsonReader& r) {
  auto v = Version::parse(r.string());
  if (!v) {
    r.fail(v.error().message);
  }
  return v.value();
}

VersionRange range(const JsonReader& r) {
  r.only_keys({"from", "before"});
  VersionRange out;
  if (r.has("from")) {
    out.from = version(r["from"]);
  }
  if (r.has("before")) {
    out.before = version(r["before"]);
  }
  return out;
}

void read_file(const JsonReader& root, CompatTable* into) {
  root.only_keys({"$comment", "drivers", "firmware"});
  std::vector<DriverCompat> drivers;
  if (root.has("drivers")) {
    const auto list = root["drivers"];
    for (std::size_t i = 0; i < list.array_size(); ++i) {
      const auto e = list[i];
      e.only_keys({"module", "versions", "kernel", "verdict", "remedy", "source"});
      DriverCompat d;
      d.module = e["module"].nonempty_string();
      if (e.has("versions")) {
        d.versions = range(e["versions"]);
      }
      if (e.has("kernel")) {
        d.kernel = range(e["kernel"]);
      }
      d.compatible = e["verdict"].one_of({"compatible", "incompatible"}) == "compatible";
      d.remedy = e.has("remedy") ? e["remedy"].string() : "";
      d.source = e["source"].nonempty_string();
      drivers.push_back(std::move(d));
    }
  }
  into->drivers.insert(into->drivers.begin(), drivers.begin(), drivers.end());
  if (root.has("firmware")) {
    const auto list = root["firmware"];
    std::vector<FirmwareMinimum> firmware;
    for (std::size_t i = 0; i < list.array_size(); ++i) {
      const auto e = list[i];
      e.only_keys({"device", "name", "minimum", "source"});
      FirmwareMinimum f;
      const auto id = e["device"].string();
      auto parsed = id.size() == 6 && id.starts_with("0x")
                        ? text::parse_uint(id.substr(2), 16, 0xffff)
                        : std::nullopt;
      if (!parsed) {
        e["device"].fail("is \"" + id + "\"; must be a PCI device ID like \"0x1021\"");
      }
      f.device = static_cast<uint16_t>(*parsed);
      f.name = e.has("name") ? e["name"].string() : id;
      f.minimum = version(e["minimum"]);
      f.source = e["source"].nonempty_string();
      firmware.push_back(std::move(f));
    }
    into->firmware.insert(into->firmware.begin(), firmware.begin(), firmware.end());
  }
}

}  // namespace

const DriverCompat* CompatTable::find(const std::string& module, const Version& version,
                                      const Version& kernel) const {
  for (const auto& d : drivers) {
    if (d.module == module && d.versions.contains(version) && d.kernel.contains(kernel)) {
      return &d;
    }
  }
  return nullptr;
}

const FirmwareMinimum* CompatTable::firmware_for(uint16_t device) const {
  for (const auto& f : firmware) {
    if (f.device == device) {
      return &f;
    }
  }
  return nullptr;
}

Result<CompatTable> parse_compat_table(const std::vector<ConfigSource>& sources) {
  CompatTable table;
  for (const auto& source : sources) {
    auto doc = parse_json_document(source.path, source.text);
    if (!doc) {
      return doc.error();
    }
    try {
      read_file(JsonReader(doc.value(), "$"), &table);
    } catch (const JsonError& e) {
      return Error{source.path + ": " + text::printable(e.path) + ": " + text::printable(e.what)};
    }
  }
  for (const auto& source : sources) {
    table.files.push_back(source.path);
  }
  return table;
}

}  // namespace vfready::model
