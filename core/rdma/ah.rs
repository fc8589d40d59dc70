// SPDX-License-Identifier: GPL-2.0

//! The RDMA core's ops for address handles (`struct ib_ah`).
//!
//! The core allocates an address handle as an [`ObjectBox<ib_ah>`] of
//! `size_ib_ah` bytes, possibly in atomic context (without
//! `RDMA_CREATE_AH_SLEEPABLE`), and may destroy it in atomic context too
//! (without `RDMA_DESTROY_AH_SLEEPABLE`): the driver must then neither
//! sleep nor allocate with `GFP_KERNEL`.

use super::{
    bindings,
    ib_device::{
        Device,
        GidAttr,
        IbDriver, //
    },
    mr::PdId,
    object::ObjectBox,
    udata::UData,
};
use kernel::{
    ffi,
    prelude::*,
    sync::Arc, //
};

/// The attributes of an address handle (`struct rdma_ah_attr`).
pub struct AhAttr<'a>(&'a bindings::rdma_ah_attr);

impl AhAttr<'_> {
    /// Port number.
    pub fn port_num(&self) -> u32 {
        self.0.port_num
    }

    /// Whether a GRH is given (`IB_AH_GRH`).
    pub fn has_grh(&self) -> bool {
        u32::from(self.0.ah_flags) & bindings::ib_ah_flags_IB_AH_GRH != 0
    }

    /// Destination GID.
    pub fn dgid(&self) -> [u8; 16] {
        // SAFETY: every bit pattern of the union is a valid byte array.
        unsafe { *self.0.grh.dgid.raw.as_ref() }
    }

    /// Flow label.
    pub fn flow_label(&self) -> u32 {
        self.0.grh.flow_label
    }

    /// Source GID index.
    pub fn sgid_index(&self) -> u8 {
        self.0.grh.sgid_index
    }

    /// Hop limit.
    pub fn hop_limit(&self) -> u8 {
        self.0.grh.hop_limit
    }

    /// Traffic class.
    pub fn traffic_class(&self) -> u8 {
        self.0.grh.traffic_class
    }

    /// The source GID entry (`grh.sgid_attr`), which the core resolves for
    /// RoCE before calling.
    pub fn sgid_attr(&self) -> Option<&GidAttr> {
        // SAFETY: the core holds a reference on the entry for as long as the
        // attributes are used; `GidAttr` is a transparent `ib_gid_attr`.
        unsafe { self.0.grh.sgid_attr.cast::<GidAttr>().as_ref() }
    }

    /// Destination MAC (`roce.dmac`).
    pub fn dmac(&self) -> [u8; 6] {
        // SAFETY: the RoCE variant of the union is plain bytes, valid for
        // any bit pattern.
        unsafe { self.0.__bindgen_anon_1.roce.as_ref().dmac }
    }
}

/// What `query_ah` reports: a RoCE address with a GRH, as the C driver's
/// `rxe_av_to_attr` writes it.
#[derive(Clone, Copy, Debug, Default)]
pub struct AhQuery {
    /// Port number.
    pub port_num: u32,
    /// Destination GID.
    pub dgid: [u8; 16],
    /// Flow label.
    pub flow_label: u32,
    /// Source GID index.
    pub sgid_index: u8,
    /// Hop limit.
    pub hop_limit: u8,
    /// Traffic class.
    pub traffic_class: u8,
}

/// A driver's address handles.
pub trait AhDriver: IbDriver {
    /// The driver's state of an address handle.
    type Ah: Send + Sync + 'static;

    /// A new address handle of `pd` (`create_ah`, `create_user_ah`);
    /// `sleepable` tells whether it may sleep, `udata` is that of a user
    /// caller.
    fn create_ah(
        dev: &Device<Self>,
        pd: PdId,
        attr: &AhAttr<'_>,
        sleepable: bool,
        udata: Option<&UData<'_>>,
    ) -> Result<Arc<Self::Ah>>;
    /// Changes the attributes (`modify_ah`).
    fn modify_ah(dev: &Device<Self>, ah: &Self::Ah, attr: &AhAttr<'_>) -> Result;
    /// The attributes (`query_ah`).
    fn query_ah(ah: &Self::Ah) -> AhQuery;
    /// The address handle is being destroyed; `sleepable` as for create.
    fn destroy_ah(dev: &Device<Self>, ah: Arc<Self::Ah>, sleepable: bool);
}

/// Installs the address handle ops of driver `T`.
pub fn install<T: AhDriver>(ops: &mut bindings::ib_device_ops) {
    ops.create_ah = Some(create_ah_cb::<T>);
    ops.create_user_ah = Some(create_ah_cb::<T>);
    ops.modify_ah = Some(modify_ah_cb::<T>);
    ops.query_ah = Some(query_ah_cb::<T>);
    ops.destroy_ah = Some(destroy_ah_cb::<T>);
    ops.size_ib_ah = ObjectBox::<bindings::ib_ah>::SIZE;
}

/// # Safety
///
/// Called by the core with a new address handle (an `ObjectBox<ib_ah>`,
/// device and PD set) of a live device of driver `T`, valid attributes and
/// a valid or NULL udata.
unsafe extern "C" fn create_ah_cb<T: AhDriver>(
    ibah: *mut bindings::ib_ah,
    init: *mut bindings::rdma_ah_init_attr,
    udata: *mut bindings::ib_udata,
) -> ffi::c_int {
    // SAFETY: see the function's safety section.
    let (dev, pd, init, udata) = unsafe {
        (
            Device::<T>::from_raw((*ibah).device),
            PdId::of((*ibah).pd),
            &*init,
            UData::from_raw(udata),
        )
    };
    // SAFETY: the core passes valid attributes.
    let attr = AhAttr(unsafe { &*init.ah_attr });
    let sleepable = init.flags & bindings::rdma_create_ah_flags_RDMA_CREATE_AH_SLEEPABLE != 0;
    match T::create_ah(dev, pd, &attr, sleepable, udata.as_ref()) {
        Ok(state) => {
            // SAFETY: the create op has exclusive access to the new handle.
            unsafe { ObjectBox::attach(ibah, state) };
            0
        }
        Err(e) => e.to_errno(),
    }
}

/// # Safety
///
/// Called by the core with a live address handle of driver `T` and valid
/// attributes.
unsafe extern "C" fn modify_ah_cb<T: AhDriver>(
    ibah: *mut bindings::ib_ah,
    attr: *mut bindings::rdma_ah_attr,
) -> ffi::c_int {
    // SAFETY: see the function's safety section.
    let (dev, ah, attr) = unsafe {
        (
            Device::<T>::from_raw((*ibah).device),
            ObjectBox::<bindings::ib_ah>::borrow::<T::Ah>(ibah),
            AhAttr(&*attr),
        )
    };
    super::op_result(T::modify_ah(dev, &ah, &attr))
}

/// # Safety
///
/// Called by the core with a live address handle of driver `T` and a
/// writable attribute buffer.
unsafe extern "C" fn query_ah_cb<T: AhDriver>(
    ibah: *mut bindings::ib_ah,
    attr: *mut bindings::rdma_ah_attr,
) -> ffi::c_int {
    // SAFETY: see the function's safety section.
    let ah = unsafe { ObjectBox::<bindings::ib_ah>::borrow::<T::Ah>(ibah) };
    let q = T::query_ah(&ah);
    // SAFETY: `attr` is writable; all zeroes is a valid `rdma_ah_attr`
    // (integers, a NULL GID attribute, byte unions).
    let attr = unsafe {
        attr.write_bytes(0, 1);
        &mut *attr
    };
    attr.type_ = bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_ROCE;
    attr.port_num = q.port_num;
    attr.ah_flags = bindings::ib_ah_flags_IB_AH_GRH as u8;
    // SAFETY: writes the byte array variant of the GID union.
    unsafe { *attr.grh.dgid.raw.as_mut() = q.dgid };
    attr.grh.flow_label = q.flow_label;
    attr.grh.sgid_index = q.sgid_index;
    attr.grh.hop_limit = q.hop_limit;
    attr.grh.traffic_class = q.traffic_class;
    0
}

/// # Safety
///
/// Called by the core with an address handle of driver `T` being
/// destroyed.
unsafe extern "C" fn destroy_ah_cb<T: AhDriver>(
    ibah: *mut bindings::ib_ah,
    flags: u32,
) -> ffi::c_int {
    // SAFETY: see the function's safety section: the destroy op has
    // exclusive access.
    let (dev, state) = unsafe {
        (
            Device::<T>::from_raw((*ibah).device),
            ObjectBox::<bindings::ib_ah>::detach::<T::Ah>(ibah),
        )
    };
    let sleepable = flags & bindings::rdma_destroy_ah_flags_RDMA_DESTROY_AH_SLEEPABLE != 0;
    if let Some(state) = state {
        T::destroy_ah(dev, state, sleepable);
    }
    0
}
