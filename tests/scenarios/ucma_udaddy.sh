# udaddy: UD QPs set up through the RDMA CM (SIDR on RoCE), datagrams both
# ways (guest a listens, b connects).
librdmacm_example udaddy -c 2 -C 20
