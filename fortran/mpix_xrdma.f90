! mpix_xrdma: XRDMA's X-operations for Fortran, in the style of mpi_f08.
!
! use mpi_f08 and use mpix_xrdma; windows, datatypes and requests are
! mpi_f08's derived types, ierror is optional, and an error goes to the
! window's error handler as in C (MPI_ERRORS_ARE_FATAL unless changed).
! Functions still come from images (xrdma-cc(1)); MPIX_Ifunc is the handle
! of one entry. Each procedure calls the C API through fortran/f08_shim.c,
! which turns buffers (assumed-rank, contiguous) into an address and a byte
! count and MPI_VAL handles into C handles. Man page: mpix_xrdma_f08(3).
module mpix_xrdma
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_int, c_intptr_t, c_char, c_null_char, c_associated
  use mpi_f08, only: MPI_Win, MPI_Datatype, MPI_Request, MPI_ADDRESS_KIND
  implicit none
  private

  !> An injected function (one entry of an image) at the origin.
  type, bind(C), public :: MPIX_Ifunc
    type(c_ptr) :: handle = c_null_ptr
  end type MPIX_Ifunc

  !> No code: MPIX_Xput is MPI_Put, MPIX_Xget is MPI_Get.
  type(MPIX_Ifunc), parameter, public :: MPIX_IFUNC_NULL = MPIX_Ifunc(c_null_ptr)

  ! XRDMA's error classes: the C library's own variables (valid after
  ! MPI_Init). Compare with the class MPI_Error_class gives for an ierror.
  integer(c_int), bind(C, name="MPIX_ERR_IFUNC_IMAGE"), protected, public :: MPIX_ERR_IFUNC_IMAGE
  integer(c_int), bind(C, name="MPIX_ERR_IFUNC_LINK"), protected, public :: MPIX_ERR_IFUNC_LINK
  integer(c_int), bind(C, name="MPIX_ERR_IFUNC_DENIED"), protected, public :: MPIX_ERR_IFUNC_DENIED
  integer(c_int), bind(C, name="MPIX_ERR_IFUNC_FAULT"), protected, public :: MPIX_ERR_IFUNC_FAULT
  integer(c_int), bind(C, name="MPIX_ERR_IFUNC_RETURN"), protected, public :: MPIX_ERR_IFUNC_RETURN
  integer(c_int), bind(C, name="MPIX_ERR_IFUNC_TIMEOUT"), protected, public :: MPIX_ERR_IFUNC_TIMEOUT
  integer(c_int), bind(C, name="MPIX_ERR_PEER"), protected, public :: MPIX_ERR_PEER

  public :: MPIX_Ifunc_load, MPIX_Ifunc_load_mem, MPIX_Ifunc_free
  public :: MPIX_Xput, MPIX_Xget, MPIX_Xinvoke, MPIX_Rxput, MPIX_Rxget, MPIX_Rxinvoke, MPIX_Xprogress
  public :: operator(==), operator(/=)

  interface operator(==)
    module procedure ifunc_eq
  end interface
  interface operator(/=)
    module procedure ifunc_ne
  end interface

  interface
    integer(c_int) function c_load(path, name, ifunc) bind(C, name="MPIX_Ifunc_load")
      import :: c_int, c_char, MPIX_Ifunc
      character(kind=c_char), dimension(*), intent(in) :: path, name
      type(MPIX_Ifunc), intent(out) :: ifunc
    end function
    integer(c_int) function c_load_mem(image, name, ifunc) bind(C, name="xrdma_f08_ifunc_load_mem")
      import :: c_int, c_char, MPIX_Ifunc
      type(*), dimension(..), intent(in) :: image
      character(kind=c_char), dimension(*), intent(in) :: name
      type(MPIX_Ifunc), intent(out) :: ifunc
    end function
    integer(c_int) function c_free(ifunc) bind(C, name="MPIX_Ifunc_free")
      import :: c_int, MPIX_Ifunc
      type(MPIX_Ifunc), intent(inout) :: ifunc
    end function
    integer(c_int) function c_xput(buf, count, dtype, target_rank, target_disp, target_count, target_type, &
                                   ifunc, args, win, request) bind(C, name="xrdma_f08_xput")
      import :: c_int, c_intptr_t, MPIX_Ifunc
      type(*), dimension(..) :: buf
      integer(c_int), value :: count, dtype, target_rank, target_count, target_type, win
      integer(c_intptr_t), value :: target_disp  ! MPI_Aint
      type(MPIX_Ifunc), value :: ifunc
      type(*), dimension(..), intent(in), optional :: args
      integer(c_int), intent(out), optional :: request
    end function
    integer(c_int) function c_xget(buf, count, dtype, target_rank, target_disp, target_count, target_type, &
                                   ifunc, args, win, request) bind(C, name="xrdma_f08_xget")
      import :: c_int, c_intptr_t, MPIX_Ifunc
      type(*), dimension(..) :: buf
      integer(c_int), value :: count, dtype, target_rank, target_count, target_type, win
      integer(c_intptr_t), value :: target_disp  ! MPI_Aint
      type(MPIX_Ifunc), value :: ifunc
      type(*), dimension(..), intent(in), optional :: args
      integer(c_int), intent(out), optional :: request
    end function
    integer(c_int) function c_xinvoke(ifunc, args, target_rank, win, request) bind(C, name="xrdma_f08_xinvoke")
      import :: c_int, MPIX_Ifunc
      type(MPIX_Ifunc), value :: ifunc
      type(*), dimension(..), intent(in), optional :: args
      integer(c_int), value :: target_rank, win
      integer(c_int), intent(out), optional :: request
    end function
    integer(c_int) function c_xprogress() bind(C, name="MPIX_Xprogress")
      import :: c_int
    end function
  end interface

contains

  logical function ifunc_eq(a, b)
    type(MPIX_Ifunc), intent(in) :: a, b
    ifunc_eq = c_associated(a%handle, b%handle) .or. &
               (.not. c_associated(a%handle) .and. .not. c_associated(b%handle))
  end function

  logical function ifunc_ne(a, b)
    type(MPIX_Ifunc), intent(in) :: a, b
    ifunc_ne = .not. ifunc_eq(a, b)
  end function

  subroutine set_ierror(rc, ierror)
    integer(c_int), intent(in) :: rc
    integer, optional, intent(out) :: ierror
    if (present(ierror)) ierror = rc
  end subroutine

  !> Read the image file path and select its entry name (absent: the image's
  !> only entry). MPIX_Ifunc_load(3).
  subroutine MPIX_Ifunc_load(path, name, ifunc, ierror)
    character(len=*), intent(in) :: path
    character(len=*), intent(in), optional :: name
    type(MPIX_Ifunc), intent(out) :: ifunc
    integer, optional, intent(out) :: ierror
    if (present(name)) then
      call set_ierror(c_load(trim(path)//c_null_char, trim(name)//c_null_char, ifunc), ierror)
    else
      call set_ierror(c_load_noname(trim(path)//c_null_char, ifunc), ierror)
    end if
  end subroutine

  integer(c_int) function c_load_noname(path, ifunc)
    character(len=*), intent(in) :: path
    type(MPIX_Ifunc), intent(out) :: ifunc
    interface
      integer(c_int) function load(path, name, ifunc) bind(C, name="MPIX_Ifunc_load")
        import :: c_int, c_char, c_ptr, MPIX_Ifunc
        character(kind=c_char), dimension(*), intent(in) :: path
        type(c_ptr), value :: name
        type(MPIX_Ifunc), intent(out) :: ifunc
      end function
    end interface
    c_load_noname = load(path, c_null_ptr, ifunc)
  end function

  !> An image held in memory (any contiguous array; its bytes are copied).
  subroutine MPIX_Ifunc_load_mem(image, name, ifunc, ierror)
    type(*), dimension(..), intent(in) :: image
    character(len=*), intent(in) :: name
    type(MPIX_Ifunc), intent(out) :: ifunc
    integer, optional, intent(out) :: ierror
    call set_ierror(c_load_mem(image, trim(name)//c_null_char, ifunc), ierror)
  end subroutine

  subroutine MPIX_Ifunc_free(ifunc, ierror)
    type(MPIX_Ifunc), intent(inout) :: ifunc
    integer, optional, intent(out) :: ierror
    call set_ierror(c_free(ifunc), ierror)
  end subroutine

  !> origin data -> target region, combined there by ifunc (MPIX_Xput(3)).
  !> args: any contiguous array or scalar, sent as its bytes (absent: none);
  !> f08_shim.c refuses a strided one ("args must be contiguous") and one past
  !> the C API's int args_size (the message says the limit).
  subroutine MPIX_Xput(origin_addr, origin_count, origin_datatype, target_rank, target_disp, &
                       target_count, target_datatype, ifunc, args, win, ierror)
    type(*), dimension(..), intent(in), asynchronous :: origin_addr
    integer, intent(in) :: origin_count, target_rank, target_count
    type(MPI_Datatype), intent(in) :: origin_datatype, target_datatype
    integer(MPI_ADDRESS_KIND), intent(in) :: target_disp
    type(MPIX_Ifunc), intent(in) :: ifunc
    type(*), dimension(..), intent(in), optional :: args
    type(MPI_Win), intent(in) :: win
    integer, optional, intent(out) :: ierror
    call set_ierror(c_xput(origin_addr, origin_count, origin_datatype%MPI_VAL, target_rank, &
                           int(target_disp, c_intptr_t), &
                           target_count, target_datatype%MPI_VAL, ifunc, args, win%MPI_VAL), ierror)
  end subroutine

  subroutine MPIX_Rxput(origin_addr, origin_count, origin_datatype, target_rank, target_disp, &
                        target_count, target_datatype, ifunc, args, win, request, ierror)
    type(*), dimension(..), intent(in), asynchronous :: origin_addr
    integer, intent(in) :: origin_count, target_rank, target_count
    type(MPI_Datatype), intent(in) :: origin_datatype, target_datatype
    integer(MPI_ADDRESS_KIND), intent(in) :: target_disp
    type(MPIX_Ifunc), intent(in) :: ifunc
    type(*), dimension(..), intent(in), optional :: args
    type(MPI_Win), intent(in) :: win
    type(MPI_Request), intent(out) :: request
    integer, optional, intent(out) :: ierror
    call set_ierror(c_xput(origin_addr, origin_count, origin_datatype%MPI_VAL, target_rank, &
                           int(target_disp, c_intptr_t), &
                           target_count, target_datatype%MPI_VAL, ifunc, args, win%MPI_VAL, &
                           request%MPI_VAL), ierror)
  end subroutine

  !> target region -> origin buffer, through ifunc's reply (MPIX_Xget(3)).
  subroutine MPIX_Xget(origin_addr, origin_count, origin_datatype, target_rank, target_disp, &
                       target_count, target_datatype, ifunc, args, win, ierror)
    type(*), dimension(..), asynchronous :: origin_addr
    integer, intent(in) :: origin_count, target_rank, target_count
    type(MPI_Datatype), intent(in) :: origin_datatype, target_datatype
    integer(MPI_ADDRESS_KIND), intent(in) :: target_disp
    type(MPIX_Ifunc), intent(in) :: ifunc
    type(*), dimension(..), intent(in), optional :: args
    type(MPI_Win), intent(in) :: win
    integer, optional, intent(out) :: ierror
    call set_ierror(c_xget(origin_addr, origin_count, origin_datatype%MPI_VAL, target_rank, &
                           int(target_disp, c_intptr_t), &
                           target_count, target_datatype%MPI_VAL, ifunc, args, win%MPI_VAL), ierror)
  end subroutine

  subroutine MPIX_Rxget(origin_addr, origin_count, origin_datatype, target_rank, target_disp, &
                        target_count, target_datatype, ifunc, args, win, request, ierror)
    type(*), dimension(..), asynchronous :: origin_addr
    integer, intent(in) :: origin_count, target_rank, target_count
    type(MPI_Datatype), intent(in) :: origin_datatype, target_datatype
    integer(MPI_ADDRESS_KIND), intent(in) :: target_disp
    type(MPIX_Ifunc), intent(in) :: ifunc
    type(*), dimension(..), intent(in), optional :: args
    type(MPI_Win), intent(in) :: win
    type(MPI_Request), intent(out) :: request
    integer, optional, intent(out) :: ierror
    call set_ierror(c_xget(origin_addr, origin_count, origin_datatype%MPI_VAL, target_rank, &
                           int(target_disp, c_intptr_t), &
                           target_count, target_datatype%MPI_VAL, ifunc, args, win%MPI_VAL, &
                           request%MPI_VAL), ierror)
  end subroutine

  !> Run ifunc at target_rank, no data (MPIX_Xinvoke(3)).
  subroutine MPIX_Xinvoke(ifunc, args, target_rank, win, ierror)
    type(MPIX_Ifunc), intent(in) :: ifunc
    type(*), dimension(..), intent(in), optional :: args
    integer, intent(in) :: target_rank
    type(MPI_Win), intent(in) :: win
    integer, optional, intent(out) :: ierror
    call set_ierror(c_xinvoke(ifunc, args, target_rank, win%MPI_VAL), ierror)
  end subroutine

  subroutine MPIX_Rxinvoke(ifunc, args, target_rank, win, request, ierror)
    type(MPIX_Ifunc), intent(in) :: ifunc
    type(*), dimension(..), intent(in), optional :: args
    integer, intent(in) :: target_rank
    type(MPI_Win), intent(in) :: win
    type(MPI_Request), intent(out) :: request
    integer, optional, intent(out) :: ierror
    call set_ierror(c_xinvoke(ifunc, args, target_rank, win%MPI_VAL, request%MPI_VAL), ierror)
  end subroutine

  subroutine MPIX_Xprogress(ierror)
    integer, optional, intent(out) :: ierror
    call set_ierror(c_xprogress(), ierror)
  end subroutine

end module mpix_xrdma
