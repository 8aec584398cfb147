"""What several plugins share (kube-scheduler's plugins/helper and the component-helpers it uses):
label selectors (apimachinery's rules), node selectors and required node affinity, tolerations,
shape scoring, CSI translation of in-tree volumes, the storage listers."""
