"""The live DB state as a tree: children built lazily, changed paths marked and revealed.

``show(state, marks)`` moves the tree to another state. States share every
unchanged subtree (copy on write), so the update compares node values by
identity and rebuilds only what changed; big collections are listed a page
at a time, with the entities that changed pinned at the top.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from tau_tui.env.environment import EnvState
from tau_tui.views.state_nodes import MARK_STYLES, MISSING, child_keys, is_container, label, size, value_at

SIDES = (("agent", "agent DB"), ("user", "user DB"))
Path_ = tuple[Any, ...]
Marks = dict[str, dict[Path_, str]]


@dataclass
class NodeRef:
    side: str
    path: Path_
    value: Any
    kind: str = "entry"  # "side" | "entry" | "more"
    populated: bool = False


def _ref(node: TreeNode[NodeRef]) -> NodeRef:
    """What a node below the (hidden, data-less) root shows: every one is added with its ``NodeRef``."""
    ref = node.data
    assert ref is not None, "a state tree node without its NodeRef"
    return ref


class StateTree(Tree[NodeRef]):
    """Agent DB and user DB at one step of a trajectory."""

    PAGE = 50

    BINDINGS = [
        Binding("j", "cursor_down", "Tree: down", show=False, id="tree.down"),
        Binding("k", "cursor_up", "Tree: up", show=False, id="tree.up"),
        Binding("space", "toggle_node", "Tree: open/close node", show=False, id="tree.toggle"),
    ]

    DEFAULT_CSS = """
    StateTree {
        background: $surface;
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__("state", id=id, classes=classes)
        self.show_root = False
        self.guide_depth = 2
        self._by_path: dict[tuple[str, Path_], TreeNode[NodeRef]] = {}
        self._marks: Marks = {}
        self._marked: set[tuple[str, Path_]] = set()
        self._auto: set[TreeNode[NodeRef]] = set()
        self._programmatic: set[TreeNode[NodeRef]] = set()
        self._keep: set[TreeNode[NodeRef]] = set()

    # --- public ---------------------------------------------------------------------------
    def forget_all(self) -> None:
        """Forget every node (another simulation is about to be shown)."""
        self.clear()
        self._by_path.clear()
        self._marks, self._marked = {}, set()
        self._auto.clear()
        self._programmatic.clear()
        self._keep = set()

    def show(self, state: EnvState, marks: Marks | None = None) -> None:
        """Show ``state``; mark paths in ``marks`` ({side: {path: mark}}) and reveal the marked leaves."""
        self._marks = marks or {}
        for side, title in SIDES:
            value = getattr(state, side)
            node = self._by_path.get((side, ()))
            if value is None:
                if node is not None:
                    self._drop(node)
                continue
            if node is None:
                node = self.root.add(title, NodeRef(side, (), value, kind="side", populated=False))
                self._by_path[(side, ())] = node
                self._populate(node)
                self._expand(node, auto=False)
            else:
                self._refresh(node, value)
        self._relabel_marks()
        self._reveal_marked()

    def node_at(self, side: str, path: Path_) -> TreeNode[NodeRef] | None:
        return self._by_path.get((side, tuple(path)))

    def marked_paths(self, side: str) -> dict[Path_, str]:
        return dict(self._marks.get(side, {}))

    # --- building ---------------------------------------------------------------------------
    def _add_entry(self, parent: TreeNode[NodeRef], key: Any, value: Any, first: bool = False) -> TreeNode[NodeRef]:
        parent_ref = _ref(parent)
        ref = NodeRef(parent_ref.side, parent_ref.path + (key,), value)
        text = self._label(ref)
        before = 0 if first and parent.children else None
        if is_container(value):
            node = parent.add(text, ref, before=before)
        else:
            node = parent.add_leaf(text, ref, before=before)
        self._by_path[(ref.side, ref.path)] = node
        return node

    def _populate(self, node: TreeNode[NodeRef]) -> None:
        """List the first page of a container's children (lazily, on first expansion)."""
        ref = _ref(node)
        if ref.populated or not is_container(ref.value):
            return
        ref.populated = True
        self._add_page(node)

    def _add_page(self, node: TreeNode[NodeRef]) -> None:
        value = _ref(node).value
        listed = {_ref(c).path[-1] for c in node.children if _ref(c).kind == "entry"}
        more = [c for c in node.children if _ref(c).kind == "more"]
        for c in more:
            c.remove()
        added = 0
        for key in child_keys(value):
            if added >= self.PAGE:
                break
            if key in listed:
                continue
            self._add_entry(node, key, value[key])
            added += 1
        self._update_more(node)

    def _update_more(self, node: TreeNode[NodeRef]) -> None:
        ref = _ref(node)
        entries = sum(1 for c in node.children if _ref(c).kind == "entry")
        remaining = size(ref.value) - entries
        more = next((c for c in node.children if _ref(c).kind == "more"), None)
        if remaining <= 0:
            if more is not None:
                more.remove()
            return
        text = Text(f"… {remaining} more (enter: list {min(remaining, self.PAGE)} more)", style="dim italic")
        if more is None:
            node.add_leaf(text, NodeRef(ref.side, ref.path, None, kind="more"))
        else:
            more.set_label(text)

    def _drop(self, node: TreeNode[NodeRef]) -> None:
        self._forget(node)
        node.remove()

    def _forget(self, node: TreeNode[NodeRef]) -> None:
        for child in node.children:
            self._forget(child)
        ref = node.data
        if ref is not None and ref.kind != "more":
            self._by_path.pop((ref.side, ref.path), None)
        self._auto.discard(node)

    def _clear_children(self, node: TreeNode[NodeRef]) -> None:
        for child in list(node.children):
            self._forget(child)
        node.remove_children()

    # --- updating to another state ---------------------------------------------------------------
    def _refresh(self, node: TreeNode[NodeRef], value: Any) -> None:
        ref = _ref(node)
        if value is ref.value:
            return
        ref.value = value
        self._relabel(node)
        if not is_container(value):
            if node.children:
                self._clear_children(node)
            ref.populated = False
            node.allow_expand = False
            return
        node.allow_expand = True
        if not ref.populated:
            return
        small = size(value) <= self.PAGE
        listed: set[Any] = set()
        for child in list(node.children):
            child_ref = _ref(child)
            if child_ref.kind != "entry":
                continue
            key = child_ref.path[-1]
            new = value_at(value, (key,))
            if new is MISSING:
                self._drop(child)
            else:
                listed.add(key)
                self._refresh(child, new)
        if small:
            for key in child_keys(value):
                if key not in listed:
                    self._add_entry(node, key, value[key])
        self._update_more(node)

    def _label(self, ref: NodeRef) -> Text:
        mark = self._marks.get(ref.side, {}).get(ref.path)
        if ref.kind == "side":
            text = Text(("agent DB" if ref.side == "agent" else "user DB"), style="bold")
            if mark is not None:
                text.append("  •", style=MARK_STYLES[mark][1].split(" on ")[0])
            text.append(f"  {{{size(ref.value)}}}", style="dim")
            return text
        return label(ref.path[-1], ref.value, mark)

    def _relabel(self, node: TreeNode[NodeRef]) -> None:
        """Set a node's label when it differs (each change repaints the node's line)."""
        text = self._label(_ref(node))
        if node.label != text:
            node.set_label(text)

    def _relabel_marks(self) -> None:
        now = {(side, path) for side, paths in self._marks.items() for path in paths}
        for key in self._marked | now:
            node = self._by_path.get(key)
            if node is not None:
                self._relabel(node)
        for side, _ in SIDES:
            node = self._by_path.get((side, ()))
            if node is not None:
                self._relabel(node)
        self._marked = now

    # --- revealing marked paths ---------------------------------------------------------------
    def _expand(self, node: TreeNode[NodeRef], auto: bool = True) -> None:
        self._populate(node)
        if not node.is_expanded:
            self._programmatic.add(node)
            node.expand()
            if auto:
                self._auto.add(node)

    def _reveal(self, side: str, path: Path_) -> TreeNode[NodeRef] | None:
        node = self._by_path.get((side, ()))
        if node is None:
            return None
        keep = {node}
        for depth in range(len(path)):
            self._expand(node)
            child = self._by_path.get((side, path[: depth + 1]))
            if child is None:
                value = value_at(_ref(node).value, (path[depth],))
                if value is MISSING:
                    break
                child = self._add_entry(node, path[depth], value, first=True)
            node = child
            keep.add(node)
        self._keep.update(keep)
        return node

    def _reveal_marked(self) -> None:
        """Open the way to every marked path; close what earlier reveals opened, once there is a new one.

        A step without changes leaves the tree as it is, so the last change stays in view.
        """
        self._keep = set()
        targets: list[TreeNode[NodeRef]] = []
        for side, paths in self._marks.items():
            for path, mark in paths.items():
                if mark.endswith("within"):
                    continue
                node = self._reveal(side, path)
                if node is None:
                    continue
                if (
                    mark in ("added", "changed", "gold")
                    and is_container(_ref(node).value)
                    and size(_ref(node).value) <= self.PAGE
                ):
                    self._expand(node)
                    self._keep.add(node)
                targets.append(node)
        if not targets:
            return
        for node in list(self._auto):
            if node not in self._keep and node.tree is self:
                self._programmatic.add(node)
                node.collapse()
                self._auto.discard(node)
        _ = self.last_line  # lay the tree out now so the node has its line
        self.move_cursor(targets[0], animate=False)

    # --- user interaction -------------------------------------------------------------------------
    def on_tree_node_expanded(self, event: Tree.NodeExpanded[NodeRef]) -> None:
        node = event.node
        if node in self._programmatic:
            self._programmatic.discard(node)
            return
        self._auto.discard(node)  # the user opened it: leave it open
        self._populate(node)

    def on_tree_node_collapsed(self, event: Tree.NodeCollapsed[NodeRef]) -> None:
        self._programmatic.discard(event.node)

    def on_tree_node_selected(self, event: Tree.NodeSelected[NodeRef]) -> None:
        node = event.node
        if node.data is not None and node.data.kind == "more" and node.parent is not None:
            self._add_page(node.parent)
