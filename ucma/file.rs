// SPDX-License-Identifier: GPL-2.0

//! An open `/dev/infiniband/rdma_cm`: command dispatch.

use crate::{
    cmd::{
        CmdHdr,
        CMD_HDR_SIZE, //
    },
    rdma::misc::{
        safe_file_access,
        MiscFile, //
    },
};
use kernel::{
    fs::File,
    pr_err_once,
    prelude::*,
    sync::{
        Arc,
        ArcBorrow, //
    },
    uaccess::UserSlice,
};

/// The state of one open file of the device.
pub(crate) struct UcmaFile;

#[vtable]
impl MiscFile for UcmaFile {
    type OwnerModule = crate::UcmaModule;

    fn open(_file: &File) -> Result<Arc<Self>> {
        Ok(Arc::new(UcmaFile, GFP_KERNEL)?)
    }

    fn write(_this: ArcBorrow<'_, Self>, file: &File, buf: UserSlice, len: usize) -> Result<usize> {
        if !safe_file_access(file) {
            pr_err_once!("ucma_write: process changed security contexts after opening file descriptor, this is not allowed.\n");
            return Err(EACCES);
        }
        if len < CMD_HDR_SIZE {
            return Err(EINVAL);
        }
        let mut raw = [0u8; CMD_HDR_SIZE];
        buf.reader().read_slice(&mut raw)?;
        let _hdr = CmdHdr::decode(&raw, len).map_err(|_| EINVAL)?;
        // No command is implemented yet (the ucma issue adds them).
        Err(ENOSYS)
    }
}
