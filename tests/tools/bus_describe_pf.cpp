// SPDX-License-Identifier: Apache-2.0
// bus-describe-pf ADDRESS BYTES: what a hostile local caller sends: DescribePF with a key
// of BYTES bytes of 0x01 (longer than any argument a shell command line takes). Prints
// "answer N" (the JSON's length) or "error N TEXT" (the error's length and its first
// 1000 bytes); exits 0 for an answer, 1 for an error, 2 when the bus cannot be reached.
#include <iostream>
#include <string>

#include "vfready/bus/bus.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: bus-describe-pf ADDRESS BYTES\n";
    return 2;
  }
  try {
    const auto client = vfready::bus::Client::connect(argv[1]);
    const std::string key(std::stoul(argv[2]), '\x01');
    try {
      const auto answer = client->describe_pf(key);
      std::cout << "answer " << answer.size() << "\n";
      return 0;
    } catch (const vfready::bus::ClientError& e) {
      const std::string text = e.what();
      std::cout << "error " << text.size() << " " << text.substr(0, 1000) << "\n";
      return 1;
    }
  } catch (const std::exception& e) {
    std::cerr << "bus-describe-pf: " << e.what() << "\n";
    return 2;
  }
}
