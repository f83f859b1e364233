// SPDX-License-Identifier: Apache-2.0
// ACS capability parsing from config-space images, through a fake sysfs.
#include <gtest/gtest.h>

#include "fake_sysfs.h"
#include "railscope/gpu/pcie_acs.h"

namespace railscope::gpu {
namespace {

using testing::FakeSysfs;

TEST(PcieAcs, RedirectBitsSet) {
  FakeSysfs fs;
  fs.pci_config("0000:02:00.0",
                FakeSysfs::config_space(true, kAcsCtrlSourceValidation | kAcsCtrlRequestRedirect |
                                                  kAcsCtrlCompletionRedirect | kAcsCtrlUpstreamForwarding));
  auto st = read_acs(SysfsRoot(fs.sys()), "0000:02:00.0");
  EXPECT_EQ(st.state, AcsState::Redirect);
  EXPECT_EQ(st.offset, 0x148);
  EXPECT_EQ(st.capability, 0x5f);
  EXPECT_TRUE(st.request_redirect());
  EXPECT_TRUE(st.completion_redirect());
  EXPECT_EQ(st.describe(), "ACS ctrl 0x001d: ReqRedir CmpltRedir SrcValid UpstreamFwd");
}

TEST(PcieAcs, OnlyCompletionRedirectStillRedirects) {
  auto st = parse_acs(FakeSysfs::config_space(true, kAcsCtrlCompletionRedirect));
  EXPECT_EQ(st.state, AcsState::Redirect);
  EXPECT_FALSE(st.request_redirect());
}

TEST(PcieAcs, CapabilityPresentButOff) {
  auto st = parse_acs(FakeSysfs::config_space(true, kAcsCtrlSourceValidation));
  EXPECT_EQ(st.state, AcsState::Off);
  EXPECT_EQ(st.describe(), "ACS ctrl 0x0001: SrcValid");
}

TEST(PcieAcs, NoCapability) {
  EXPECT_EQ(parse_acs(FakeSysfs::config_space(false, 0)).state, AcsState::NoCapability);
}

TEST(PcieAcs, UnprivilegedReadNeedsRoot) {
  FakeSysfs fs;
  fs.pci_config("0000:02:00.0", FakeSysfs::config_space(true, kAcsCtrlRequestRedirect, /*truncated=*/true));
  EXPECT_EQ(read_acs(SysfsRoot(fs.sys()), "0000:02:00.0").state, AcsState::NeedsRoot);
}

TEST(PcieAcs, MissingDeviceIsUnreadable) {
  FakeSysfs fs;
  EXPECT_EQ(read_acs(SysfsRoot(fs.sys()), "0000:09:00.0").state, AcsState::Unreadable);
}

TEST(PcieAcs, LoopingCapabilityListTerminates) {
  auto c = FakeSysfs::config_space(false, 0);
  c[0x102] = 0x01;  // version 1, next = 0x100 (points at itself)
  c[0x103] = 0x10;
  EXPECT_EQ(parse_acs(c).state, AcsState::NoCapability);
}

}  // namespace
}  // namespace railscope::gpu
