// SPDX-License-Identifier: GPL-2.0

//! The entry points of the cargo-fuzz targets in `tests/fuzz/`: the RoCE
//! packet parser (`rxe/wire`) and the rdma_cm write path's decoders
//! (`ucma/cmd.rs`, `ucma/abi.rs`), fed whatever bytes the fuzzer makes. They
//! live in this crate because the code they drive is crate-private here as
//! in the modules. A panic (an overflow: the host build checks them, as the
//! kernel's does; an index out of bounds; a broken invariant asserted
//! below) is what the fuzzer reports.

use crate::crc::crc32_le;
use crate::rxe_wire::{
    icrc::{
        IpHdr,
        UDP_HDR_LEN, //
    },
    packet::{
        Packet,
        MAX_PKT_LEN, //
    },
};
use crate::ucma_abi::*;
use crate::ucma_cmd::{
    Cmd,
    CmdHdr,
    CMD_HDR_SIZE, //
};

/// An IPv4 header with no options, for the ICRC's pseudo header.
const IPV4: [u8; 20] = [
    0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 192, 0, 2, 1, 192, 0, 2, 2,
];

/// `data` as a received packet, BTH to ICRC: parsed, and if accepted, every
/// header read and the ICRC computed, as the receive path does.
pub fn packet(data: &[u8]) {
    let Ok(p) = Packet::parse(data) else {
        return;
    };
    assert!(data.len() <= MAX_PKT_LEN);
    assert_eq!(p.bytes().len(), data.len());
    assert_eq!(p.opcode(), data[0]);
    let _ = (p.mask(), p.psn(), p.qpn(), p.bth());
    let _ = (p.rdeth(), p.deth(), p.reth(), p.feth(), p.atmeth());
    let _ = (p.aeth(), p.atmack(), p.immdt(), p.ieth());
    let payload = p.payload();
    // The payload lies within the packet, before the pad and the ICRC.
    assert!(payload.len() + 4 <= data.len());
    let _ = p.icrc();
    if let Some(ip) = IpHdr::parse(&IPV4) {
        let _ = p.icrc_ok(crc32_le, ip, &[0u8; UDP_HDR_LEN]);
    }
}

/// A fixed-size command body from `body`, as the module reads it
/// (`copy_from_user` of the whole struct); `None` if the write is short.
fn body<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
    b.get(..N)?.try_into().ok()
}

/// A command body of which the user gave `in_len` bytes, the rest zero, as
/// the module reads the commands that grew (`read_cmd_partial`).
fn partial<const N: usize>(b: &[u8], in_len: usize) -> [u8; N] {
    let mut x = [0u8; N];
    let n = in_len.min(N).min(b.len());
    x[..n].copy_from_slice(&b[..n]);
    x
}

/// A CONNECT or ACCEPT shorter than its full `size` carries no ECE.
fn no_ece_unless_given(c: &Connect, in_len: usize, size: usize) {
    if in_len < size {
        assert_eq!((c.ece.vendor_id, c.ece.attr_mod), (0, 0));
    }
}

/// `data` as a write to `/dev/infiniband/rdma_cm`: the header decoded
/// against the write's length, then the body of its command decoded as the
/// module's dispatch does before it acts on anything.
pub fn ucma_write(data: &[u8]) {
    let Some(raw) = data.get(..CMD_HDR_SIZE) else {
        return;
    };
    let raw: [u8; CMD_HDR_SIZE] = raw.try_into().unwrap();
    let Ok(hdr) = CmdHdr::decode(&raw, data.len()) else {
        return;
    };
    assert!(data.len() >= CMD_HDR_SIZE + usize::from(hdr.in_len));
    let b = &data[CMD_HDR_SIZE..];
    let in_len = usize::from(hdr.in_len);
    match hdr.cmd {
        Cmd::CreateId => {
            let _ = body(b).map(|x| CreateId::decode(&x));
        }
        Cmd::DestroyId => {
            let _ = body(b).map(|x| DestroyId::decode(&x));
        }
        Cmd::BindIp => {
            let _ = body(b).map(|x| Bind::decode_ip(&x));
        }
        Cmd::Bind => {
            if let Some(Ok(d)) = body(b).map(|x| Bind::decode(&x)) {
                assert!(addr_size(&d.addr) <= SOCKADDR_STORAGE_SIZE);
            }
        }
        Cmd::ResolveIp => {
            let _ = body(b).map(|x| ResolveAddr::decode_ip(&x));
        }
        Cmd::ResolveAddr => {
            if let Some(Ok(d)) = body(b).map(|x| ResolveAddr::decode(&x)) {
                assert!(addr_size(&d.dst) <= SOCKADDR_STORAGE_SIZE);
            }
        }
        Cmd::ResolveRoute | Cmd::Notify => {
            let _ = body(b).map(|x| IdArg::decode(&x));
        }
        Cmd::QueryRoute | Cmd::Query => {
            let _ = body(b).map(|x| Query::decode(&x));
        }
        Cmd::Connect if in_len >= Connect::MIN_IN => {
            let c = Connect::decode(&partial(b, in_len), in_len);
            no_ece_unless_given(&c, in_len, Connect::SIZE);
        }
        Cmd::Accept if in_len >= Connect::ACCEPT_MIN_IN => {
            let c = Connect::decode_accept(&partial(b, in_len), in_len);
            no_ece_unless_given(&c, in_len, Connect::ACCEPT_SIZE);
        }
        Cmd::Reject => {
            if let Some(Some(r)) = body(b).map(|x| Reject::decode(&x)) {
                assert!(r.data().len() <= MAX_PRIVATE_DATA);
            }
        }
        Cmd::JoinIpMcast => {
            let _ = body(b).map(|x| JoinMcast::decode_ip(&x));
        }
        Cmd::JoinMcast => {
            if let Some(Ok(d)) = body(b).map(|x| JoinMcast::decode(&x)) {
                assert!(addr_size(&d.addr) <= SOCKADDR_STORAGE_SIZE);
            }
        }
        _ => {}
    }
}
