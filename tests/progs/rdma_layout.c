/* SPDX-License-Identifier: MIT */
/*
 * rdma_layout - the sizes and offsets, in the installed rdma-core headers,
 * of the structures libuiw-rdma hands to applications or reads from them
 * (docs/RDMA-COMPAT.md, section 3, is this program's output).
 */
#include <stddef.h>
#include <stdio.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define S(t) printf("\n%-32s size %3zu\n", #t, sizeof(struct t))
#define F(t, f) printf("  %-30s %3zu  (%zu)\n", #f, offsetof(struct t, f), sizeof(((struct t *)0)->f))

int main(void)
{
	S(ibv_device);
	F(ibv_device, _ops); F(ibv_device, node_type); F(ibv_device, transport_type);
	F(ibv_device, name); F(ibv_device, dev_name); F(ibv_device, dev_path); F(ibv_device, ibdev_path);
	S(ibv_context);
	F(ibv_context, device); F(ibv_context, ops); F(ibv_context, cmd_fd); F(ibv_context, async_fd);
	F(ibv_context, num_comp_vectors); F(ibv_context, mutex); F(ibv_context, abi_compat);
	S(ibv_context_ops);
	F(ibv_context_ops, poll_cq); F(ibv_context_ops, req_notify_cq); F(ibv_context_ops, post_srq_recv);
	F(ibv_context_ops, post_send); F(ibv_context_ops, post_recv);
	S(verbs_context);
	F(verbs_context, query_port); F(verbs_context, query_device_ex); F(verbs_context, create_qp_ex);
	F(verbs_context, _ABI_placeholder3); F(verbs_context, sz); F(verbs_context, context);
	S(ibv_device_attr);
	F(ibv_device_attr, fw_ver); F(ibv_device_attr, max_mr_size); F(ibv_device_attr, max_qp_wr);
	F(ibv_device_attr, max_sge); F(ibv_device_attr, max_qp_rd_atom); F(ibv_device_attr, atomic_cap);
	F(ibv_device_attr, phys_port_cnt);
	S(ibv_device_attr_ex);
	F(ibv_device_attr_ex, orig_attr); F(ibv_device_attr_ex, comp_mask);
	S(ibv_port_attr);
	F(ibv_port_attr, state); F(ibv_port_attr, max_msg_sz); F(ibv_port_attr, gid_tbl_len);
	F(ibv_port_attr, active_speed); F(ibv_port_attr, link_layer); F(ibv_port_attr, flags);
	F(ibv_port_attr, port_cap_flags2);
	S(ibv_gid_entry);
	S(ibv_pd);
	F(ibv_pd, context); F(ibv_pd, handle);
	S(ibv_mr);
	F(ibv_mr, context); F(ibv_mr, pd); F(ibv_mr, addr); F(ibv_mr, length); F(ibv_mr, handle);
	F(ibv_mr, lkey); F(ibv_mr, rkey);
	S(ibv_comp_channel);
	F(ibv_comp_channel, context); F(ibv_comp_channel, fd); F(ibv_comp_channel, refcnt);
	S(ibv_cq);
	F(ibv_cq, context); F(ibv_cq, channel); F(ibv_cq, cq_context); F(ibv_cq, handle); F(ibv_cq, cqe);
	F(ibv_cq, mutex); F(ibv_cq, cond); F(ibv_cq, comp_events_completed); F(ibv_cq, async_events_completed);
	S(ibv_srq);
	F(ibv_srq, context); F(ibv_srq, srq_context); F(ibv_srq, pd); F(ibv_srq, handle);
	S(ibv_qp);
	F(ibv_qp, context); F(ibv_qp, qp_context); F(ibv_qp, pd); F(ibv_qp, send_cq); F(ibv_qp, recv_cq);
	F(ibv_qp, srq); F(ibv_qp, handle); F(ibv_qp, qp_num); F(ibv_qp, state); F(ibv_qp, qp_type);
	F(ibv_qp, mutex); F(ibv_qp, cond); F(ibv_qp, events_completed);
	S(ibv_qp_ex);
	F(ibv_qp_ex, qp_base); F(ibv_qp_ex, comp_mask); F(ibv_qp_ex, wr_id); F(ibv_qp_ex, wr_flags);
	F(ibv_qp_ex, wr_rdma_write); F(ibv_qp_ex, wr_send); F(ibv_qp_ex, wr_start);
	F(ibv_qp_ex, wr_complete); F(ibv_qp_ex, wr_abort); F(ibv_qp_ex, wr_set_sge);
	S(ibv_wc);
	F(ibv_wc, wr_id); F(ibv_wc, status); F(ibv_wc, opcode); F(ibv_wc, vendor_err); F(ibv_wc, byte_len);
	F(ibv_wc, imm_data); F(ibv_wc, qp_num); F(ibv_wc, src_qp); F(ibv_wc, wc_flags);
	S(ibv_send_wr);
	F(ibv_send_wr, wr_id); F(ibv_send_wr, next); F(ibv_send_wr, sg_list); F(ibv_send_wr, num_sge);
	F(ibv_send_wr, opcode); F(ibv_send_wr, send_flags); F(ibv_send_wr, wr); F(ibv_send_wr, qp_type);
	S(ibv_recv_wr);
	S(ibv_sge);
	S(rdma_event_channel);
	F(rdma_event_channel, fd);
	S(rdma_cm_id);
	F(rdma_cm_id, verbs); F(rdma_cm_id, channel); F(rdma_cm_id, context); F(rdma_cm_id, qp);
	F(rdma_cm_id, route); F(rdma_cm_id, ps); F(rdma_cm_id, port_num); F(rdma_cm_id, event);
	F(rdma_cm_id, send_cq_channel); F(rdma_cm_id, send_cq); F(rdma_cm_id, recv_cq_channel);
	F(rdma_cm_id, recv_cq); F(rdma_cm_id, srq); F(rdma_cm_id, pd); F(rdma_cm_id, qp_type);
	S(rdma_route);
	F(rdma_route, addr); F(rdma_route, path_rec); F(rdma_route, num_paths);
	S(rdma_cm_event);
	F(rdma_cm_event, id); F(rdma_cm_event, listen_id); F(rdma_cm_event, event); F(rdma_cm_event, status);
	F(rdma_cm_event, param);
	S(rdma_conn_param);
	F(rdma_conn_param, private_data); F(rdma_conn_param, private_data_len);
	F(rdma_conn_param, responder_resources); F(rdma_conn_param, initiator_depth);
	F(rdma_conn_param, rnr_retry_count); F(rdma_conn_param, srq); F(rdma_conn_param, qp_num);
	return 0;
}
