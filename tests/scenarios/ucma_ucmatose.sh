# ucmatose: several RC connections through the RDMA CM (guest a listens,
# b connects), messages both ways, then disconnect.
librdmacm_example ucmatose -c 4 -C 20 -S 1024
