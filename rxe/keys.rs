// SPDX-License-Identifier: GPL-2.0

//! Memory keys, access flags and address arithmetic of memory regions and
//! windows, as the C driver computes them (`rxe_mr.c`, `rxe_mw.c`,
//! `rxe_verbs.h`).
//!
//! An lkey/rkey is the object's pool index shifted left by 8 and an 8-bit
//! key the owner may change (fast registration, memory window binds). No
//! kernel dependency: this file is also built by the host test crate
//! (`tests/host`).

use crate::params;

/// `IB_ACCESS_LOCAL_WRITE`.
pub const ACCESS_LOCAL_WRITE: u32 = 1 << 0;
/// `IB_ACCESS_REMOTE_WRITE`.
pub const ACCESS_REMOTE_WRITE: u32 = 1 << 1;
/// `IB_ACCESS_REMOTE_READ`.
pub const ACCESS_REMOTE_READ: u32 = 1 << 2;
/// `IB_ACCESS_REMOTE_ATOMIC`.
pub const ACCESS_REMOTE_ATOMIC: u32 = 1 << 3;
/// `IB_ACCESS_MW_BIND`.
pub const ACCESS_MW_BIND: u32 = 1 << 4;
/// `IB_ZERO_BASED`.
pub const ZERO_BASED: u32 = 1 << 5;
/// `IB_ACCESS_ON_DEMAND`.
pub const ACCESS_ON_DEMAND: u32 = 1 << 6;
/// `IB_ACCESS_FLUSH_GLOBAL`.
pub const ACCESS_FLUSH_GLOBAL: u32 = 1 << 8;
/// `IB_ACCESS_FLUSH_PERSISTENT`.
pub const ACCESS_FLUSH_PERSISTENT: u32 = 1 << 9;
/// `IB_ACCESS_OPTIONAL`: bits 20 to 29, which a device may ignore.
pub const ACCESS_OPTIONAL: u32 = (((1 << 29) << 1) - 1) & !((1 << 20) - 1);

/// `RXE_ACCESS_REMOTE`: what a fast-registration MR always allows.
pub const ACCESS_REMOTE: u32 = ACCESS_REMOTE_READ | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_ATOMIC;
/// `RXE_ACCESS_SUPPORTED_MR`.
pub const ACCESS_SUPPORTED_MR: u32 = ACCESS_REMOTE
    | ACCESS_LOCAL_WRITE
    | ACCESS_MW_BIND
    | ACCESS_ON_DEMAND
    | ACCESS_FLUSH_GLOBAL
    | ACCESS_FLUSH_PERSISTENT
    | ACCESS_OPTIONAL;
/// `RXE_ACCESS_SUPPORTED_MW`.
pub const ACCESS_SUPPORTED_MW: u32 = ACCESS_SUPPORTED_MR | ZERO_BASED;

/// `IB_MR_REREG_TRANS`.
pub const REREG_TRANS: u32 = 1 << 0;
/// `IB_MR_REREG_PD`.
pub const REREG_PD: u32 = 1 << 1;
/// `IB_MR_REREG_ACCESS`.
pub const REREG_ACCESS: u32 = 1 << 2;
/// `RXE_MR_REREG_SUPPORTED`: a new PD or new access flags, not a new range.
pub const REREG_SUPPORTED: u32 = REREG_PD | REREG_ACCESS;

/// The key of the object at pool index `index` with variable byte `key`.
pub const fn make_key(index: u32, key: u8) -> u32 {
    (index << 8) | key as u32
}

/// The pool index a key names.
pub const fn key_index(key: u32) -> u32 {
    key >> 8
}

/// The variable byte of a key.
pub const fn key_byte(key: u32) -> u8 {
    (key & 0xff) as u8
}

/// `key` with its variable byte replaced by that of `new`.
pub const fn with_key_byte(key: u32, new: u32) -> u32 {
    (key & !0xff) | (new & 0xff)
}

/// Whether an rkey names a memory window rather than a region (its index is
/// in the window range of the pools).
pub const fn rkey_is_mw(rkey: u32) -> bool {
    let index = key_index(rkey);
    index >= params::MIN_MW_INDEX && index <= params::MAX_MW_INDEX
}

/// A key byte different from `last` (`rxe_get_next_key`), drawn from
/// `random` bytes until one differs; `None` when `last` is `None` (a new
/// object) takes the first byte.
pub fn next_key_byte(last: Option<u8>, mut random: impl FnMut() -> u8) -> u8 {
    loop {
        let k = random();
        if Some(k) != last {
            return k;
        }
    }
}

/// The kinds of memory region (`enum ib_mr_type` as the driver uses it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MrKind {
    /// All of kernel memory, by kernel virtual address.
    Dma,
    /// Pinned user memory.
    User,
    /// Pages set by `map_mr_sg`, valid after a REG_MR work request.
    Fast,
}

/// Whether `[iova, iova + length)` lies in a region of `kind` mapping
/// `[mr_iova, mr_iova + mr_length)` (`mr_check_range`); a DMA region
/// covers everything.
pub fn range_ok(kind: MrKind, mr_iova: u64, mr_length: u64, iova: u64, length: u64) -> bool {
    match kind {
        MrKind::Dma => true,
        MrKind::User | MrKind::Fast => {
            iova >= mr_iova && length <= mr_length && iova - mr_iova <= mr_length - length
        }
    }
}

/// The page geometry of a region: its page size (`ibmr.page_size`) against
/// the CPU page size, and the region's start address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageGeometry {
    /// log2 of the region's page size.
    pub page_shift: u32,
    /// log2 of the CPU page size.
    pub cpu_page_shift: u32,
    /// The region's first address (`ibmr.iova`).
    pub iova: u64,
}

impl PageGeometry {
    fn page_size(&self) -> u64 {
        1u64 << self.page_shift
    }

    fn cpu_page_size(&self) -> u64 {
        1u64 << self.cpu_page_shift
    }

    /// Which entry of the page list holds `iova` (`rxe_mr_iova_to_index`).
    /// Entries are CPU pages when the region's pages are larger (they were
    /// split), else one per region page.
    #[inline]
    pub fn index(&self, iova: u64) -> u64 {
        if self.page_size() > self.cpu_page_size() {
            let base = self.iova & !(self.page_size() - 1);
            iova.wrapping_sub(base) >> self.cpu_page_shift
        } else {
            (iova >> self.page_shift).wrapping_sub(self.iova >> self.page_shift)
        }
    }

    /// The offset of `iova` in its entry, before the entry's own offset
    /// (`rxe_mr_iova_to_page_offset`).
    #[inline]
    pub fn offset(&self, iova: u64) -> u64 {
        if self.page_size() > self.cpu_page_size() {
            iova & (self.cpu_page_size() - 1)
        } else {
            iova & (self.page_size() - 1)
        }
    }

    /// Whether the region's page size and the CPU's are multiples of one
    /// another, as `map_mr_sg` requires.
    pub fn compatible(&self) -> bool {
        let (a, b) = (self.page_size(), self.cpu_page_size());
        a % b == 0 || b % a == 0
    }

    /// How many CPU pages one region page spans (at least one).
    #[inline]
    pub fn cpu_pages_per_page(&self) -> u64 {
        (self.page_size() >> self.cpu_page_shift).max(1)
    }
}

/// The checks of a new or re-registered user region's access flags beyond
/// the core's: `false` if a flag the driver does not support is set
/// (refused with `EOPNOTSUPP`).
pub fn mr_access_supported(access: u32) -> bool {
    access & !ACCESS_SUPPORTED_MR == 0
}

/// Whether a memory window bind's access flags are supported.
pub fn mw_access_supported(access: u32) -> bool {
    access & !ACCESS_SUPPORTED_MW == 0
}

/// Whether a lookup asking for `wanted` access is allowed by a region or
/// window granting `granted`.
pub fn access_allows(granted: u32, wanted: u32) -> bool {
    wanted & granted == wanted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        assert_eq!(make_key(1, 0xab), 0x1ab);
        assert_eq!(key_index(0x1234_56ab), 0x12_3456);
        assert_eq!(key_byte(0x1234_56ab), 0xab);
        assert_eq!(with_key_byte(0x1234_56ab, 0x1cd), 0x1234_56cd);
        assert!(!rkey_is_mw(make_key(params::MAX_MR_INDEX, 0)));
        assert!(rkey_is_mw(make_key(params::MIN_MW_INDEX, 0)));
        assert!(rkey_is_mw(make_key(params::MAX_MW_INDEX, 0xff)));
        let mut bytes = [7u8, 7, 7, 9].into_iter();
        assert_eq!(next_key_byte(Some(7), || bytes.next().unwrap()), 9);
        assert_eq!(next_key_byte(None, || 7), 7);
    }

    #[test]
    fn access() {
        assert_eq!(ACCESS_OPTIONAL, 0x3ff0_0000);
        assert_eq!(ACCESS_SUPPORTED_MR, 0x3ff0_035f);
        assert!(mr_access_supported(ACCESS_LOCAL_WRITE | ACCESS_ON_DEMAND));
        assert!(!mr_access_supported(ZERO_BASED));
        // IB_ACCESS_HUGETLB is not among the driver's.
        assert!(!mr_access_supported(1 << 7));
        assert!(mw_access_supported(ZERO_BASED | ACCESS_REMOTE_READ));
        assert!(access_allows(ACCESS_REMOTE, ACCESS_REMOTE_WRITE));
        assert!(!access_allows(ACCESS_REMOTE_READ, ACCESS_REMOTE_WRITE));
        assert!(access_allows(0, 0));
    }

    #[test]
    fn ranges() {
        assert!(range_ok(MrKind::Dma, 0, 0, u64::MAX, u64::MAX));
        assert!(range_ok(MrKind::User, 0x1000, 0x100, 0x1000, 0x100));
        assert!(range_ok(MrKind::User, 0x1000, 0x100, 0x10ff, 1));
        assert!(range_ok(MrKind::User, 0x1000, 0x100, 0x1100, 0));
        assert!(!range_ok(MrKind::User, 0x1000, 0x100, 0x10ff, 2));
        assert!(!range_ok(MrKind::Fast, 0x1000, 0x100, 0xfff, 1));
        assert!(!range_ok(MrKind::Fast, 0x1000, 0x100, 0x1000, 0x101));
        assert!(!range_ok(MrKind::User, u64::MAX - 1, 2, u64::MAX, 2));
    }

    #[test]
    fn geometry() {
        // Region pages as the CPU's: one entry per page from the first.
        let g = PageGeometry {
            page_shift: 12,
            cpu_page_shift: 12,
            iova: 0x1_0800,
        };
        assert_eq!(g.index(0x1_0800), 0);
        assert_eq!(g.index(0x1_1000), 1);
        assert_eq!(g.offset(0x1_1234), 0x234);
        assert!(g.compatible());
        // 2 MiB region pages split into CPU pages from the aligned base.
        let g = PageGeometry {
            page_shift: 21,
            cpu_page_shift: 12,
            iova: 0x20_1000,
        };
        assert_eq!(g.index(0x20_1000), 1);
        assert_eq!(g.index(0x40_0000), 512);
        assert_eq!(g.offset(0x40_0010), 0x10);
        assert_eq!(g.cpu_pages_per_page(), 512);
        // Smaller region pages: one entry each.
        let g = PageGeometry {
            page_shift: 9,
            cpu_page_shift: 12,
            iova: 0x400,
        };
        assert_eq!(g.index(0x600), 1);
        assert_eq!(g.offset(0x7ff), 0x1ff);
        assert_eq!(g.cpu_pages_per_page(), 1);
        let g = PageGeometry {
            page_shift: 13,
            cpu_page_shift: 14,
            iova: 0,
        };
        assert!(g.compatible());
    }
}
