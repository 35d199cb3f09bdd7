"""``ClassStore``: the teacher's transactions, the students' writes and everyone's reads over one class file."""
from __future__ import annotations

from autoreg_server.class_store.reads import ClassReads
from autoreg_server.class_store.seats import SeatActions
from autoreg_server.class_store.teacher import TeacherActions


class ClassStore(TeacherActions, SeatActions, ClassReads):
    """Every class of this server, in one SQLite file (WAL: readers never wait for the one writer).

    ``ClassStore(path, clock=time.time, hours=6, max_classes=50, max_students=60)``; each part is a subclass
    of ``core.StoreCore`` and shares its connection and write transaction.
    """
