// SPDX-License-Identifier: GPL-2.0

//! The command header of `/dev/infiniband/rdma_cm` writes.
//!
//! Pure logic with no kernel dependency: built into the module and into the
//! host unit tests (`tests/host`). The ABI is `include/uapi/rdma/rdma_user_cm.h`:
//! every write is a `struct rdma_ucm_cmd_hdr { __u32 cmd; __u16 in; __u16 out; }`
//! followed by `in` bytes of command; `out` is the size of the response
//! buffer whose user address the command carries.

/// Size of `struct rdma_ucm_cmd_hdr`.
pub(crate) const CMD_HDR_SIZE: usize = 8;

/// The commands of the ABI, numbered as `RDMA_USER_CM_CMD_*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Cmd {
    CreateId = 0,
    DestroyId = 1,
    BindIp = 2,
    ResolveIp = 3,
    ResolveRoute = 4,
    QueryRoute = 5,
    Connect = 6,
    Listen = 7,
    Accept = 8,
    Reject = 9,
    Disconnect = 10,
    InitQpAttr = 11,
    GetEvent = 12,
    GetOption = 13,
    SetOption = 14,
    Notify = 15,
    JoinIpMcast = 16,
    LeaveMcast = 17,
    MigrateId = 18,
    Query = 19,
    Bind = 20,
    ResolveAddr = 21,
    JoinMcast = 22,
    ResolveIbService = 23,
    WriteCmEvent = 24,
}

impl Cmd {
    const ALL: [Cmd; 25] = [
        Cmd::CreateId,
        Cmd::DestroyId,
        Cmd::BindIp,
        Cmd::ResolveIp,
        Cmd::ResolveRoute,
        Cmd::QueryRoute,
        Cmd::Connect,
        Cmd::Listen,
        Cmd::Accept,
        Cmd::Reject,
        Cmd::Disconnect,
        Cmd::InitQpAttr,
        Cmd::GetEvent,
        Cmd::GetOption,
        Cmd::SetOption,
        Cmd::Notify,
        Cmd::JoinIpMcast,
        Cmd::LeaveMcast,
        Cmd::MigrateId,
        Cmd::Query,
        Cmd::Bind,
        Cmd::ResolveAddr,
        Cmd::JoinMcast,
        Cmd::ResolveIbService,
        Cmd::WriteCmEvent,
    ];

    /// The command numbered `n`, if the ABI has one.
    pub(crate) fn from_u32(n: u32) -> Option<Cmd> {
        Self::ALL.get(usize::try_from(n).ok()?).copied()
    }
}

/// A decoded, length-checked command header.
#[allow(
    dead_code,
    reason = "the lengths are read by the commands of the ucma issue"
)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CmdHdr {
    /// The command.
    pub(crate) cmd: Cmd,
    /// Bytes of command following the header.
    pub(crate) in_len: u16,
    /// Size of the caller's response buffer.
    pub(crate) out_len: u16,
}

/// Why a header is refused; the C module answers `EINVAL` to all three.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HdrError {
    /// The write is shorter than a header.
    Short,
    /// The command number is beyond the ABI's table.
    UnknownCmd,
    /// The header claims more command bytes than were written.
    InBeyondWrite,
}

impl CmdHdr {
    /// Decodes the header at the start of a write of `write_len` bytes.
    ///
    /// `bytes` is the header as copied from the user (native endian, as the
    /// ABI is); checks happen in the C module's order, so the errors match.
    pub(crate) fn decode(bytes: &[u8; CMD_HDR_SIZE], write_len: usize) -> Result<CmdHdr, HdrError> {
        if write_len < CMD_HDR_SIZE {
            return Err(HdrError::Short);
        }
        let cmd = u32::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        let in_len = u16::from_ne_bytes([bytes[4], bytes[5]]);
        let out_len = u16::from_ne_bytes([bytes[6], bytes[7]]);
        let cmd = Cmd::from_u32(cmd).ok_or(HdrError::UnknownCmd)?;
        if usize::from(in_len) + CMD_HDR_SIZE > write_len {
            return Err(HdrError::InBeyondWrite);
        }
        Ok(CmdHdr {
            cmd,
            in_len,
            out_len,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr(cmd: u32, in_len: u16, out_len: u16) -> [u8; CMD_HDR_SIZE] {
        let mut b = [0u8; CMD_HDR_SIZE];
        b[..4].copy_from_slice(&cmd.to_ne_bytes());
        b[4..6].copy_from_slice(&in_len.to_ne_bytes());
        b[6..].copy_from_slice(&out_len.to_ne_bytes());
        b
    }

    #[test]
    fn numbering_matches_the_abi() {
        for (i, c) in Cmd::ALL.iter().enumerate() {
            assert_eq!(*c as u32, i as u32);
            assert_eq!(Cmd::from_u32(i as u32), Some(*c));
        }
        assert_eq!(Cmd::from_u32(25), None);
        assert_eq!(Cmd::from_u32(u32::MAX), None);
    }

    #[test]
    fn decodes_a_valid_header() {
        let h = CmdHdr::decode(&hdr(0, 24, 4), 32).unwrap();
        assert_eq!(
            h,
            CmdHdr {
                cmd: Cmd::CreateId,
                in_len: 24,
                out_len: 4
            }
        );
    }

    #[test]
    fn refuses_like_the_c_module() {
        assert_eq!(CmdHdr::decode(&hdr(0, 0, 0), 7), Err(HdrError::Short));
        assert_eq!(CmdHdr::decode(&hdr(25, 0, 0), 8), Err(HdrError::UnknownCmd));
        // An unknown command wins over a bad length, as in ucma_write().
        assert_eq!(
            CmdHdr::decode(&hdr(99, 100, 0), 8),
            Err(HdrError::UnknownCmd)
        );
        assert_eq!(
            CmdHdr::decode(&hdr(1, 1, 0), 8),
            Err(HdrError::InBeyondWrite)
        );
        assert_eq!(
            CmdHdr::decode(&hdr(1, u16::MAX, 0), 8),
            Err(HdrError::InBeyondWrite)
        );
        assert!(CmdHdr::decode(&hdr(1, u16::MAX, 0), usize::from(u16::MAX) + 8).is_ok());
    }

    #[test]
    fn never_panics_on_any_header() {
        // A cheap exhaustive-ish sweep standing in for a fuzz target.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let b = x.to_ne_bytes();
            let len = (x >> 40) as usize % 70_000;
            let _ = CmdHdr::decode(&b, len);
        }
    }
}
